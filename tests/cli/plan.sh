#!/bin/sh
# CLI tests of the main job (planner --model --cluster): exit codes 0, 2 and
# 3; the table's parts; --format json parses (python3 -m json.tool) and holds
# the documented keys (docs/json-schema.md); -o writes the report on success
# and nothing at all when planning fails.  Run from the repository root.
set -u
P=./planner
M=configs/gpt3-175b.json
C=clusters/h100x512.yaml
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A cluster GPT-3 175B cannot fit on: one DGX H100 (8 x 80 GB for 2.8 TB of
# weights, gradients and Adam state).
cat > "$T/one.yaml" <<'YAML'
name: one-dgx
groups:
  - name: dgx
    gpu: H100-SXM
    nodes: 1
    gpus_per_node: 8
    intra_node_bandwidth: 450GB/s
    inter_node_bandwidth: 400Gbps
YAML

# 1. the default example: exit 0, a ranked table and the winner's breakdowns
$P --model $M --cluster $C > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 0 ] || fail "default example: exit $rc: $(cat "$T/err")"
[ -s "$T/err" ] && fail "default example wrote to stderr: $(cat "$T/err")"
grep -q '^gpt3-175b on h100x512: 512 GPUs (64 x 8 H100-SXM), global batch 1536, sequence 2048' "$T/out" \
    || fail "header line"
grep -q '^ rank  tp  pp    dp' "$T/out" || fail "table header"
[ "$(grep -c '^ *[0-9][0-9]* ' "$T/out")" -ge 10 ] || fail "fewer than 10 ranked plans"
for s in 'Best plan: tp ' 'Time per step: ' 'pipeline bubble' 'DP comm (exposed)' \
         'Memory per GPU on stage ' 'optimizer ' 'activations ' 'GiB usable' 'Bound by: ' \
         'Search: '; do
    grep -q "$s" "$T/out" || fail "table lacks '$s'"
done

# 2. --top and --fix: all knobs fixed evaluates one strategy (the selective
# modules too: free, the memory-saving set is a second plan that ranks)
$P --model $M --cluster $C --top 3 \
   --fix tp=8,pp=16,dp=4,cp=1,ep=1,vpp=2,mbs=1,sp=on,recompute=selective,zero=1,\
recompute_modules=core_attn > "$T/out" \
    || fail "fixed plan: exit $?"
grep -q 'Search: 1 candidates evaluated (1 feasible' "$T/out" || fail "fixed plan: not one candidate"
grep -q 'Best plan: tp 8, pp 16, dp 4, cp 1, vpp 2, mbs 1 (384 micro-batches), sp on, recompute selective, zero 1' \
    "$T/out" || fail "fixed plan: $(grep 'Best plan' "$T/out")"

# 3. JSON: parses, documented keys, best first
$P --model $M --cluster $C --format json > "$T/json" || fail "json: exit $?"
python3 -m json.tool "$T/json" > /dev/null || fail "json does not parse"
python3 - "$T/json" <<'PY' || fail "json keys"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("planner_version", "model", "cluster", "search", "strategies"):
    assert k in d, k
for k in ("candidates", "feasible", "seconds"):
    assert k in d["search"], k
assert d["model"]["hidden_dropout"] == 0.1, d["model"]   # gpt3-175b names none: Megatron's
s = d["strategies"]
assert len(s) == 10, len(s)
keys = ("tp pp dp cp ep vpp mbs gbs sp recompute zero step_time_s tokens_per_s "
        "tokens_per_s_per_gpu tflops_per_gpu mfu peak_memory_bytes feasible time memory stages").split()
for p in s:
    for k in keys:
        assert k in p, k
    assert p["feasible"] is True
    assert p["tp"] * p["pp"] * p["dp"] * p["cp"] == 512
    assert sum(st["layers"] for st in p["stages"]) == 96
    for st in p["stages"]:
        assert st["gpu"] == "H100-SXM" and st["peak_memory_bytes"] > 0
tps = [p["tokens_per_s"] for p in s]
assert tps == sorted(tps, reverse=True), tps
assert "closest_miss" not in d
PY

# 4. usage errors: exit 2, one message, nothing on stdout
$P --model $M --cluster $C --fix tpp=8 > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "bad --fix: exit $rc"
grep -q "^planner: --fix: unknown key 'tpp' (did you mean 'tp'?)" "$T/err" || fail "bad --fix: $(cat "$T/err")"
[ -s "$T/out" ] && fail "bad --fix wrote to stdout"
$P --model $M --cluster $C --fix tp=8,tp=4 -o "$T/fail2.txt" 2> "$T/err"
[ $? -eq 2 ] || fail "duplicate key: not exit 2"
grep -q "duplicate key 'tp'" "$T/err" || fail "duplicate key: $(cat "$T/err")"
[ -e "$T/fail2.txt" ] && fail "-o written on a usage error"
$P --model $M --cluster $C --fix recompute=none,recompute_modules=mlp > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "contradictory --fix: exit $rc"
grep -q "^planner: --fix: 'recompute=none,recompute_modules=mlp': recompute_modules needs selective recompute" \
    "$T/err" || fail "contradictory --fix: $(cat "$T/err")"
[ -s "$T/out" ] && fail "contradictory --fix wrote to stdout"
for pins in sp=off,tp_comm_overlap=on pp=1,vpp=2 zero=0,overlap_param_gather=on; do
    $P --model $M --cluster $C --fix $pins > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] || fail "contradictory --fix $pins: exit $rc (3 is 'no feasible plan')"
    grep -q "^planner: --fix: '$pins': " "$T/err" || fail "contradictory --fix $pins: $(cat "$T/err")"
done

# pinned recompute_modules without recompute: selective recompute (Megatron
# reads --recompute-modules only there), every ranked row 'sel', none twice;
# a module the model cannot have is no feasible plan (exit 3), the rule in
# the advice, as other model-rule pins
$P --model llama3-8b --cluster $C --fix recompute_modules=mlp > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 0 ] || fail "recompute_modules=mlp: exit $rc: $(cat "$T/err")"
rows=$(awk '/^ rank/{t=1;next} t&&/^ *[0-9]+ /{print;next} t{exit}' "$T/out")
[ "$(echo "$rows" | wc -l)" -eq 10 ] || fail "recompute_modules=mlp: not 10 rows"
echo "$rows" | grep -qv ' sel ' && fail "recompute_modules=mlp ranked: $rows"
grep -q '^Best plan: .*, recompute selective (mlp)' "$T/out" ||
    fail "recompute_modules=mlp best: $(grep '^Best' "$T/out")"
for case in "llama3-8b h100x512 recompute_modules=mlp" \
            "mixtral-8x7b a100x1024 recompute_modules=moe_act"; do
    set -- $case
    d=$($P --model $1 --cluster $2 --fix $3 2>/dev/null |
        awk '/^ rank/{t=1;next} t&&/^ *[0-9]+ /{$1="";print;next} t{exit}' | sort | uniq -d)
    [ -z "$d" ] || fail "$case: ranked rows the same plan: $d"
done
$P --model llama3-8b --cluster $C --fix recompute_modules=moe_act > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 3 ] || fail "recompute_modules=moe_act on a dense model: exit $rc"
grep -q '^advice: .*: moe_act recompute needs MoE layers$' "$T/err" ||
    fail "recompute_modules=moe_act on a dense model: $(cat "$T/err")"

# 5. nothing fits: exit 3, the closest miss and advice on stderr, no output file
$P --model $M --cluster "$T/one.yaml" -o "$T/fail3.txt" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 3 ] || fail "infeasible: exit $rc: $(cat "$T/err")"
[ -e "$T/fail3.txt" ] && fail "-o written when no plan fits"
[ -s "$T/out" ] && fail "infeasible wrote to stdout"
grep -q '^planner: no feasible plan: gpt3-175b on one-dgx: 8 GPUs' "$T/err" || fail "infeasible header: $(head -1 "$T/err")"
grep -q '^closest miss: tp ' "$T/err" || fail "no closest miss"
grep -q '  over$' "$T/err" || fail "no stage over capacity"
grep -q '^advice: .*nodes (.* GPUs, [0-9]*x) fit' "$T/err" || fail "advice: $(grep advice "$T/err")"
# with --fix gpus=8 on 64 nodes, "8x" is 64 GPUs: 8 nodes of 8, not 8 x 64
$P --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml --fix gpus=8 > /dev/null 2> "$T/err8"
grep -q '^advice: 8 nodes (64 GPUs, 8x) fit' "$T/err8" || fail "gpus=8 advice: $(grep advice "$T/err8")"
# ... and in JSON: strategies empty, closest_miss and advice present
$P --model $M --cluster "$T/one.yaml" --format json > "$T/json" 2> /dev/null
[ $? -eq 3 ] || fail "infeasible json: not exit 3"
python3 - "$T/json" <<'PY' || fail "infeasible json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["strategies"] == []
assert d["closest_miss"]["feasible"] is False
assert d["closest_miss"]["peak_memory_bytes"] > d["cluster"]["groups"][0]["usable_memory_bytes"]
assert d["advice"]
PY

# 6. a fixed layout that breaks Megatron's rules (96 heads over tp 64): exit 3 with the rule
$P --model $M --cluster $C --fix tp=64 2> "$T/err" > /dev/null
[ $? -eq 3 ] || fail "tp=64: not exit 3"
grep -q "^advice: no strategy satisfies Megatron's rules under --fix; e.g. tp 64, " "$T/err" \
    || fail "tp=64: $(cat "$T/err")"
$P --model $M --cluster $C --fix tp=3 2> "$T/err" > /dev/null
[ $? -eq 3 ] || fail "tp=3: not exit 3"
grep -q "^advice: the fixed tp x cp x pp = 3 does not divide the 512 GPUs" "$T/err" || fail "tp=3: $(cat "$T/err")"

# 6b. plan and emit give one verdict (issue 10): Llama 3 70B's 8 query groups do not
# split over tp 16; the search refuses it with Megatron's rule, as emit does
for e in "" "--emit megatron"; do
    # shellcheck disable=SC2086
    $P --model configs/llama3-70b.json --cluster $C --fix tp=16 $e 2> "$T/err" > "$T/out"
    [ $? -eq 3 ] || fail "tp=16 $e: not exit 3"
    grep -q "^advice: no strategy satisfies Megatron's rules under --fix; e.g. tp 16, .*: 8 query groups are not divisible by tp=16$" "$T/err" ||
        fail "tp=16 $e: $(cat "$T/err")"
    [ -s "$T/out" ] && fail "tp=16 $e: wrote a plan"
done

# 7. -o on success: the same report as stdout, written atomically
$P --model $M --cluster $C --top 3 -o "$T/ok.txt" > "$T/stdout" || fail "-o: exit $?"
[ -s "$T/stdout" ] && fail "-o also wrote to stdout"
$P --model $M --cluster $C --top 3 > "$T/direct"
diff "$T/direct" "$T/ok.txt" | grep -v 'Search: ' | grep -q '^[<>]' && fail "-o differs from stdout"
ls "$T" | grep -q '\.tmp' && fail "temporary file left behind"
# 8. the software stack: --stack overrides the cluster's stack:, the header and
# the JSON name it, the search tries only its knobs, an unknown name is exit 2
# with a suggestion and nothing on stdout
$P --model $M --cluster $C --top 3 > "$T/core" || fail "core: exit $?"
head -1 "$T/core" | grep -q ', bf16, stack megatron-core$' || fail "header: $(head -1 "$T/core")"
$P --model $M --cluster $C --stack megatron-lm-2020 --top 3 > "$T/old" || fail "2020: exit $?"
head -1 "$T/old" | grep -q ', stack megatron-lm-2020$' || fail "2020 header: $(head -1 "$T/old")"
sed -n '4,6p' "$T/old" | awk '$8 != "off" || $11 != 0 || $6 != 1 { bad = 1 } END { exit bad }' ||
    fail "megatron-lm-2020 plans use sp, ZeRO or vpp: $(sed -n '3,6p' "$T/old")"
$P --model $M --cluster $C --stack deepspeed --top 1 --format json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["cluster"]["stack"] == "deepspeed", d["cluster"]' ||
    fail "JSON cluster.stack"
printf 'stack: pytorch-fsdp2\n' | cat - $C > "$T/fsdp.yaml"
$P --model $M --cluster "$T/fsdp.yaml" --top 1 | head -1 | grep -q ', stack pytorch-fsdp2$' ||
    fail "stack: in the YAML"
$P --model $M --cluster "$T/fsdp.yaml" --stack megatron-core --top 1 | head -1 |
    grep -q ', stack megatron-core$' || fail "--stack overrides stack:"
$P --model $M --cluster $C --stack megatron-lm2021 > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || fail "unknown --stack: not exit 2"
[ -s "$T/out" ] && fail "unknown --stack: wrote to stdout"
grep -q "^planner: --stack: unknown software stack 'megatron-lm2021' (did you mean 'megatron-lm-2021'?); known: megatron-core, " "$T/err" ||
    fail "unknown --stack: $(cat "$T/err")"
# 9. a --fix value the stack does not have is a usage error naming the knob and
# the stack (exit 2, nothing on stdout), from the cluster's stack: or --stack;
# a value it has is planned with
for spec in "deepspeed vpp=2 vpp=2 1" "deepspeed sp=on sp=on off" \
            "megatron-lm-2020 zero=1 zero=1 0" "deepspeed recompute=selective recompute=selective none, full" \
            "pytorch-fsdp2 zero=1 zero=1 0, 2, 3"; do
    set -- $spec
    stack=$1 fix=$2 shown=$3
    shift 3
    $P --model $M --cluster $C --stack "$stack" --fix "$fix" > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] || fail "--stack $stack --fix $fix: exit $rc, not 2"
    [ -s "$T/out" ] && fail "--stack $stack --fix $fix: wrote to stdout"
    [ "$(cat "$T/err")" = "planner: --fix $shown: the $stack stack has no $shown (it has: $*)" ] ||
        fail "--stack $stack --fix $fix: $(cat "$T/err")"
done
$P --model $M --cluster "$T/fsdp.yaml" --fix zero=1 > "$T/out" 2> "$T/err"
[ $? -eq 2 ] && grep -q '^planner: --fix zero=1: the pytorch-fsdp2 stack has no zero=1 ' "$T/err" ||
    fail "stack: in the YAML, --fix zero=1: $(cat "$T/err")"
$P --model $M --cluster $C --stack deepspeed --fix vpp=1,zero=3 --top 1 > "$T/out" ||
    fail "deepspeed --fix vpp=1,zero=3: exit $?"
echo "plan.sh: ok"
