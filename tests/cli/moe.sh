#!/bin/sh
# CLI tests of MoE plans (issue 11): DeepSeek-V3 (configs/deepseek-v3.json:
# 61 layers, 256 experts, 1 MTP layer) on its own training cluster
# (clusters/h800x2048.yaml, 256 x 8 H800) ranks expert parallelism >= 8 first
# (every one of the top 10 too); at a fixed pp 8 vpp 4, which neither the even
# nor the embedding/loss-accounting split cuts, the plan runs on a
# --pipeline-model-parallel-layout, Megatron-Bridge's DeepSeek-V3 one
# "Et|(tt|)*30mL" (1 + 30 x 2 decoder layers; emitted as "t*2" per stage).
# Run from the repository root.
set -u
P=./planner
M=configs/deepseek-v3.json
C=clusters/h800x2048.yaml
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

$P --model $M --cluster $C > "$T/out" 2> "$T/err" || fail "plan: exit $?: $(cat "$T/err")"
# the ep column of the top 10 rows (rank tp pp dp cp ep ...)
awk '/^ rank  tp/ {on = 1; next} on && /^ *[0-9]+ / {print $6; n++} n == 10 {exit}' "$T/out" \
    > "$T/ep"
[ "$(wc -l < "$T/ep")" -eq 10 ] || fail "fewer than 10 ranked plans"
while read -r ep; do
    [ "$ep" -ge 8 ] || fail "a top-10 plan with ep $ep: $(sed -n 6,17p "$T/out")"
done < "$T/ep"

$P --model $M --cluster $C --fix pp=8,vpp=4 --emit megatron > "$T/args" 2> "$T/err" \
    || fail "emit pp 8 vpp 4: exit $?: $(cat "$T/err")"
want="Et|$(i=0; while [ $i -lt 30 ]; do printf 't*2|'; i=$((i + 1)); done)mL"
grep -qF -- "--pipeline-model-parallel-layout '$want'" "$T/args" \
    || fail "layout: $(grep -- --pipeline-model-parallel-layout "$T/args")"
grep -q -- '--num-virtual-stages-per-pipeline-rank' "$T/args" && fail "layout with vpp flag"
grep -q -- '--mtp-num-layers 1' "$T/args" || fail "no --mtp-num-layers"
exit 0
