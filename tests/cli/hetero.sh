#!/bin/sh
# CLI tests of heterogeneous clusters and uneven splits: AMP's two clusters
# (exit 0, under 50 ms, a stage map in the table, `stages` in JSON with gpu,
# layers and peak_memory_bytes), --partition ilp, the 3-GPU-type 1,024-GPU
# cluster (stages on several GPU types, layers covering the model), the
# mixed H100 + A100 verdict line, Llama 3.1 405B with pp not dividing its 126
# layers and the Megatron arguments that carry an uneven split, and bad
# --partition values.  Run from the repository root.
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 > /dev/null 2>&1 || { echo "SKIP hetero.sh: python3 not found"; exit 77; }

# 1. AMP: GPT-2 on 16 T4 and on 12 V100 + 4 T4, DP and ILP partitions
for cl in amp-4xg4dn amp-3xp3-1xg4dn; do
    for part in dp ilp; do
        $P --model configs/amp-gpt2.json --cluster clusters/$cl.yaml --partition $part \
            --top 5 --format json > "$T/$cl.json" 2> "$T/err"
        rc=$?
        [ $rc -eq 0 ] || fail "$cl $part: exit $rc: $(cat "$T/err")"
        python3 - "$T/$cl.json" "$cl" <<'PY' || fail "$cl $part: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["search"]["seconds"] >= 0  # timing is bench/run.sh's job, not a test's
assert len(d["strategies"]) == 5
for s in d["strategies"]:
    assert s["feasible"]
    assert sum(st["layers"] for st in s["stages"]) == 24
    for st in s["stages"]:
        assert st["gpu"] in ("T4", "V100-SXM2-16GB"), st["gpu"]
        assert 0 < st["peak_memory_bytes"] <= st["memory"]["capacity_bytes"]
if sys.argv[2] == "amp-3xp3-1xg4dn":
    assert "placement_note" in d["search"]
PY
    done
done
$P --model configs/amp-gpt2.json --cluster clusters/amp-3xp3-1xg4dn.yaml > "$T/out" 2> "$T/err" \
    || fail "AMP table: $(cat "$T/err")"
grep -q '^  placement: best across groups' "$T/out" || fail "AMP: no placement line"
# dp 16 x mbs 2 is AMP's global batch 32: one micro-batch, said in the singular
$P --model configs/amp-gpt2.json --cluster clusters/amp-4xg4dn.yaml > "$T/out" 2> "$T/err" \
    || fail "AMP 4xg4dn table: $(cat "$T/err")"
grep -q '^Best plan: tp 1, pp 1, dp 16, cp 1, vpp 1, mbs 2 (1 micro-batch), ' "$T/out" \
    || fail "AMP 4xg4dn: $(grep '^Best plan' "$T/out")"

# 2. three GPU types, 1,024 GPUs, ILP partitions: the best plan spans groups
$P --model configs/llama3-70b.json --cluster clusters/mixed3x1024.yaml --partition ilp \
    --ilp-time-limit 2 --format json > "$T/mix.json" 2> "$T/err" \
    || fail "mixed3x1024: $(cat "$T/err")"
python3 - "$T/mix.json" <<'PY' || fail "mixed3x1024: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
best = d["strategies"][0]
gpus = {st["gpu"] for st in best["stages"]}
assert len(gpus) >= 2, gpus
assert sum(st["layers"] for st in best["stages"]) == 80
assert all(st["tp"] * st["dp"] > 0 for st in best["stages"])
assert "mixing groups wins" in d["search"]["placement_note"], d["search"]["placement_note"]
PY
$P --model configs/llama3-70b.json --cluster clusters/mixed3x1024.yaml > "$T/out" 2> "$T/err" \
    || fail "mixed3x1024 table"
grep -q '^  stage map (layers, GPU, tp' "$T/out" || fail "mixed3x1024: no stage map"
grep -q 'A100-SXM-80GB' "$T/out" || fail "mixed3x1024: no A100 stage"

# 3. 32 DGX H100 + 32 DGX A100: the verdict line names the winner
$P --model configs/llama3-70b.json --cluster clusters/h100-a100-mixed.yaml > "$T/out" 2> "$T/err" \
    || fail "h100-a100-mixed: $(cat "$T/err")"
grep -Eq '^  placement: .*(mixing groups wins|one group wins)' "$T/out" \
    || fail "h100-a100-mixed: no verdict"

# 4. Llama 3.1 405B: 126 layers, pp 8 does not divide them; Megatron output
#    carries the uneven split (first/last stage counts, a layout, or with
#    vpp the embedding/loss accounting; the cp 2 winner uses the latter)
$P --model configs/llama3.1-405b.json --cluster clusters/h100x16384.yaml --fix pp=8,tp=8 \
    --format json > "$T/405.json" 2> "$T/err" || fail "405B pp=8: $(cat "$T/err")"
python3 - "$T/405.json" <<'PY' || fail "405B pp=8: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["strategies"][0]
layers = [st["layers"] for st in s["stages"]]
assert s["pp"] == 8 and sum(layers) == 126 and len(set(layers)) > 1, layers
assert max(layers) - min(layers) <= 3, layers
PY
$P --model configs/llama3.1-405b.json --cluster clusters/h100x16384.yaml --fix pp=8,tp=8 \
    --emit megatron > "$T/args" 2> "$T/err" || fail "405B emit: $(cat "$T/err")"
grep -Eq -- '--decoder-(first|last)-pipeline-num-layers|--pipeline-model-parallel-layout|--account-for-embedding-in-pipeline-split' \
    "$T/args" || fail "405B emit: no uneven split in the Megatron arguments"

# 5. bad --partition / --ilp-time-limit: usage errors (exit 2)
$P --model configs/amp-gpt2.json --cluster clusters/amp-4xg4dn.yaml --partition lp \
    > /dev/null 2> "$T/err"
[ $? -eq 2 ] || fail "--partition lp: not exit 2"
grep -q "expected dp or ilp" "$T/err" || fail "--partition lp: message"
$P --model configs/amp-gpt2.json --cluster clusters/amp-4xg4dn.yaml --ilp-time-limit 0 \
    > /dev/null 2> "$T/err"
[ $? -eq 2 ] || fail "--ilp-time-limit 0: not exit 2"
exit 0
