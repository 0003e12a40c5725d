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

# a pinned layout: Megatron-Bridge's pp 4 vpp 4 one (4 + 14 x 4 + 1 = 61)
$P --model $M --cluster $C --fix pp=4 --pipeline-layout 'Et*4|(t*4|)*14tmL' --emit megatron \
    > "$T/args" 2> "$T/err" || fail "pinned layout: exit $?: $(cat "$T/err")"
want="Et*4|$(i=0; while [ $i -lt 14 ]; do printf 't*4|'; i=$((i + 1)); done)tmL"
grep -qF -- "--pipeline-model-parallel-layout '$want'" "$T/args" \
    || fail "pinned layout: $(grep -- --pipeline-model-parallel-layout "$T/args")"
# usage errors (exit 2, nothing on stdout): a bad letter at character 12,
# no pp, a stage count pp does not divide
usage_case() {
    want=$1; shift
    $P --model $M --cluster $C "$@" > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] || fail "$*: exit $rc"
    [ -s "$T/out" ] && fail "$*: wrote to stdout"
    grep -qF -- "planner: $want" "$T/err" || fail "$*: stderr: $(cat "$T/err")"
}
usage_case "--pipeline-layout: character 12: invalid layer character 'x'" \
    --fix pp=8 --pipeline-layout 'Et|(tt|)*30xL'
usage_case "--pipeline-layout needs --fix pp=N" --pipeline-layout 'Et|(tt|)*30mL'
usage_case "--pipeline-layout: character 1: 32 stages are not a multiple of pp 3" \
    --fix pp=3 --pipeline-layout 'Et|(tt|)*30mL'

# a runs file with a published layout: predicted on it; a bad one is an
# input error (exit 1) at the key's line and column
row() {
    cat <<JSON
{"runs": [{"id": "dsv3_layout", "source": "test", "gpu": "B200", "num_gpus": 256,
  "gpus_per_node": 8,
  "model": {"layers": 61, "hidden": 7168, "heads": 128, "kv_heads": 128, "ffn_hidden": 18432,
            "vocab": 129280, "seq_len": 4096, "activation": "swiglu",
            "moe": {"moe_experts": 256, "moe_topk": 8, "moe_ffn_hidden": 2048,
                    "shared_experts": 1, "dense_layers": 3}},
  "parallel": {"tp": 1, "pp": 8, "dp": 32, "cp": 1, "ep": 8, "vpp": null, "mbs": 1,
               "gbs": 2048, "sequence_parallel": null, "recompute": null,
               "pipeline_layout": "$1"},
  "precision": "bf16", "measured": {"tokens_per_s_per_gpu": 2000, "step_time_s": 16.4},
  "unpublished": ["vpp", "sequence_parallel", "recompute"]}]}
JSON
}
row 'Et|(tt|)*30L' > "$T/runs.json"
$P validate "$T/runs.json" > "$T/out" 2> "$T/err" || fail "validate layout: exit $?: $(cat "$T/err")"
grep -q 'dsv3_layout .* vpp4 ' "$T/out" || fail "validate layout: $(cat "$T/out")"
row 'Et|(tt|)*30mL' > "$T/runs.json"
$P validate "$T/runs.json" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 1 ] || fail "bad runs layout: exit $rc"
grep -q "^planner: $T/runs.json:9:16: runs\[0\].parallel.pipeline_layout: character 12: 1 MTP layers (m) given, the model has 0" "$T/err" \
    || fail "bad runs layout: $(cat "$T/err")"

# The Transformer Engine graphs of the MoE router and dispatch preprocessing
# (te_moe_graphs): with the flex dispatcher the search turns them on for
# Qwen3-235B-A22B on GB200 NVL72 and Megatron gets their flags; the text
# report says so; megatron-core only (exit 2 on deepspeed), not with the
# full-iteration graph (exit 2).
Q="--model configs/qwen3-235b-a22b.json --cluster clusters/gb200x576.yaml"
$P $Q --fix flex_dispatcher=on --emit megatron > "$T/args" 2> "$T/err" \
    || fail "te_moe_graphs emit: exit $?: $(cat "$T/err")"
grep -q -- '--cuda-graph-impl transformer_engine' "$T/args" \
    || fail "no --cuda-graph-impl: $(cat "$T/args")"
grep -q -- '--cuda-graph-scope moe_router moe_preprocess' "$T/args" || fail "no --cuda-graph-scope"
grep -q -- '--te-rng-tracker' "$T/args" || fail "no --te-rng-tracker"
$P $Q --fix flex_dispatcher=on > "$T/out" 2> "$T/err" || fail "te_moe_graphs plan: exit $?"
grep -q "CUDA graphs: each MoE layer's router and dispatch preprocessing" "$T/out" \
    || fail "te_moe_graphs report: $(sed -n 16,22p "$T/out")"
# The flex token dispatcher, searched: the default plan runs it (HybridEP on
# the newest release; the report says so); core_v0.15.0 has only DeepEP,
# which does not run across NVL72's multi-node NVLink domain: its plan keeps
# alltoall, and a pinned flex plan is no plan (exit 3, the advice says why;
# emit's own refusal of such a plan: test_emit flex_backend_flags).
$P $Q > "$T/out" 2> "$T/err" || fail "flex plan: exit $?"
grep -q "token dispatcher: flex (DeepEP/HybridEP" "$T/out" || fail "flex report: $(sed -n 16,22p "$T/out")"
$P $Q --emit megatron > "$T/args" 2> "$T/err" || fail "flex emit: exit $?"
grep -q -- '--moe-token-dispatcher-type flex' "$T/args" || fail "no flex type: $(cat "$T/args")"
grep -q -- '--moe-flex-dispatcher-backend hybridep' "$T/args" || fail "no hybridep backend"
grep -q -- '--moe-hybridep-num-sms 32' "$T/args" || fail "HybridEP's SMs not pinned"
[ "$(grep -c -- '--moe-token-dispatcher-type' "$T/args")" -eq 1 ] || fail "two dispatcher types"
$P $Q --megatron-version 0.15 --emit megatron > "$T/args" 2> "$T/err" || fail "0.15: exit $?"
grep -q -- '--moe-token-dispatcher-type alltoall' "$T/args" || fail "0.15: $(cat "$T/args")"
$P $Q --megatron-version 0.15 --fix flex_dispatcher=on --emit megatron > "$T/args" 2> "$T/err"
rc=$?
[ $rc -eq 3 ] || fail "flex on core_v0.15.0 GB200: exit $rc"
[ -s "$T/args" ] && fail "flex on core_v0.15.0: wrote to stdout"
grep -q "^advice: .*: core_v0.15.0 has only DeepEP, which does not run across a multi-node NVLink" \
    "$T/err" || fail "flex on core_v0.15.0: $(cat "$T/err")"
# Selective recompute's layernorm re-runs nothing under the router graphs
# with the flex dispatcher (Megatron-Core keeps the MoE pre-MLP norm): Mixtral's
# default plan on h100x512 (flex + graphs) emits moe_act alone.
$P --model configs/mixtral-8x7b.json --cluster clusters/h100x512.yaml --emit megatron \
    > "$T/args" 2> "$T/err" || fail "Mixtral emit: exit $?"
grep -q -- '--cuda-graph-scope moe_router moe_preprocess' "$T/args" || fail "Mixtral: no graphs"
grep -q -- '--recompute-modules moe_act \\$' "$T/args" \
    || fail "Mixtral: $(grep -- --recompute-modules "$T/args")"
# ... and pinned there with the graphs and flex it is a usage error whose
# message (the longest rule message) is printed whole (it was cut at 255)
$P --model configs/mixtral-8x7b.json --cluster clusters/h100x512.yaml \
    --fix recompute_modules=layernorm+moe_act,te_moe_graphs=on,flex_dispatcher=on \
    > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "layernorm under flex graphs pinned: exit $rc"
grep -q "re-runs nothing under .*; leave layernorm out of recompute_modules or the graphs off$" \
    "$T/err" || fail "layernorm pin message cut: $(cat "$T/err")"
# The shared-expert overlap with the flex dispatcher: Megatron-Core takes the
# pair from core_v0.18.0 ("only works with alltoall or flex token
# dispatcher"); pinned on an earlier release it is a usage error (exit 2).
Q18="--model tests/data/qwen1.5-moe-a2.7b.json --cluster clusters/h100x512.yaml"
Q18="$Q18 --fix shared_expert_overlap=on,flex_dispatcher=on"
$P $Q18 --megatron-version 0.18 --emit megatron > "$T/args" 2> "$T/err" \
    || fail "shared overlap + flex on 0.18: exit $?: $(cat "$T/err")"
grep -q -- '--moe-shared-expert-overlap' "$T/args" || fail "0.18: no --moe-shared-expert-overlap"
grep -q -- '--moe-token-dispatcher-type flex' "$T/args" || fail "0.18: no flex dispatcher"
$P $Q18 --megatron-version 0.17 > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "shared overlap + flex on 0.17: exit $rc"
grep -q "core_v0.17.0: --moe-shared-expert-overlap runs with the flex token dispatcher from" \
    "$T/err" || fail "shared overlap + flex on 0.17: $(cat "$T/err")"
# core_v0.15.0's --cuda-graph-scope has no moe_router/moe_preprocess (from
# core_v0.16.0): its DeepEP plan on H800 keeps the flex dispatcher without
# the router graphs, and pinning them is a usage error (exit 2: no plan is
# reported that the release cannot run; emit's own check, test_emit).
Q15="--model configs/qwen3-30b-a3b.json --cluster clusters/h800x2048.yaml --megatron-version 0.15"
$P $Q15 --emit megatron > "$T/args" 2> "$T/err" || fail "0.15 DeepEP: exit $?: $(cat "$T/err")"
grep -q -- '--moe-enable-deepep' "$T/args" || fail "0.15 DeepEP: $(cat "$T/args")"
# ... costed as HybridEP, which every validating run used: unvalidated
$P $Q15 > "$T/out" 2> "$T/err" || fail "0.15 DeepEP plan: exit $?"
grep -q '^Unvalidated: .*flex_dispatcher=deepep (flex token dispatcher with DeepEP' "$T/out" \
    || fail "0.15 DeepEP not unvalidated: $(grep -i unvalidated "$T/out")"
grep -q -- 'moe_router' "$T/args" && fail "0.15: router graphs emitted: $(cat "$T/args")"
$P $Q15 --fix te_moe_graphs=on > "$T/args" 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "te_moe_graphs on core_v0.15.0: exit $rc"
[ -s "$T/args" ] && fail "te_moe_graphs on core_v0.15.0: wrote to stdout"
grep -q "core_v0.15.0: te_moe_graphs=on: .* come with core_v0.16.0" "$T/err" \
    || fail "te_moe_graphs on core_v0.15.0: $(cat "$T/err")"
$P $Q --fix te_moe_graphs=on --stack deepspeed > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "te_moe_graphs on deepspeed: exit $rc"
grep -q "the deepspeed stack has no te_moe_graphs=on" "$T/err" || fail "deepspeed: $(cat "$T/err")"
$P $Q --fix te_moe_graphs=on,cuda_graph=on > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "te_moe_graphs with cuda_graph: exit $rc"
exit 0
