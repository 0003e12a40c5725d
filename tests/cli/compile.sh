#!/bin/sh
# CLI tests of --torch-compile (each transformer block compiled with
# torch.compile, torchtitan's --training.compile): on pytorch-fsdp2 the same
# plan is predicted faster (the element-wise ops fuse, layer_cost.c
# eager_extra_bytes) with a smaller op-level SAC saved set (memory.c
# memory_op_sac_bytes), and the header and JSON say so; on a stack without
# eager blocks (megatron-core) it is a usage error, exit 2, nothing written,
# whether the stack comes from --stack or the cluster file; `planner size`
# takes it too.  Run from the repository root.
set -u
P=./planner
M=configs/llama3-8b.json
C=clusters/h200x64.yaml
FIX=tp=2,pp=1,cp=1,mbs=1,sp=on,recompute=selective,zero=3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. one fixed plan, eager then compiled: the JSON's step time and activations
$P -m $M -c $C --stack pytorch-fsdp2 --fix $FIX --top 1 --format json > "$T/eager.json" ||
    fail "eager: exit $?"
$P -m $M -c $C --stack pytorch-fsdp2 --fix $FIX --top 1 --format json --torch-compile \
    > "$T/compiled.json" || fail "compiled: exit $?"
# Llama 3 8B (h 4096, 32 layers), tp 2 with SP, 4096 tokens a micro-batch:
# compiled, each layer's saved set loses the FFN output (2h bytes a token)
# and one of the two SP-gathered norm outputs (2h/tp): 12288 B a token,
# 50,331,648 B a layer; the peak holds a whole number of layers' worth.
python3 - "$T/eager.json" "$T/compiled.json" <<'PY' || fail "eager vs compiled"
import json, sys
e, c = (json.load(open(f)) for f in sys.argv[1:])
assert "torch_compile" not in e["cluster"], e["cluster"]
assert c["cluster"]["torch_compile"] is True, c["cluster"]
se, sc = e["strategies"][0], c["strategies"][0]
assert sc["step_time_s"] < 0.95 * se["step_time_s"], (se["step_time_s"], sc["step_time_s"])
d = se["memory"]["activations_bytes"] - sc["memory"]["activations_bytes"]
k = d / 50331648
assert abs(k - round(k)) < 1e-9 and 1 <= round(k) <= 32, d
PY

# 2. the table's header names it after the stack; without it, unchanged
$P -m $M -c $C --stack pytorch-fsdp2 --fix $FIX --top 1 --torch-compile | head -1 |
    grep -q ', bf16, stack pytorch-fsdp2 (torch.compile)$' || fail "compiled header"
$P -m $M -c $C --stack pytorch-fsdp2 --fix $FIX --top 1 | head -1 |
    grep -q ', bf16, stack pytorch-fsdp2$' || fail "eager header"

# 3. the search: the best compiled plan is faster than the best eager one
e=$($P -m $M -c $C --stack pytorch-fsdp2 --top 1 --format json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["strategies"][0]["step_time_s"])')
c=$($P -m $M -c $C --stack pytorch-fsdp2 --top 1 --format json --torch-compile |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["strategies"][0]["step_time_s"])')
python3 -c "import sys; sys.exit(not $c < $e)" || fail "best compiled $c s not under eager $e s"

# 4. megatron-core (the cluster's default, or --stack): exit 2, the message,
# nothing on stdout, no -o file
for s in "" "--stack megatron-core"; do
    $P -m $M -c $C $s --torch-compile -o "$T/out.txt" > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] || fail "megatron-core '$s': exit $rc"
    [ -s "$T/out" ] && fail "megatron-core '$s': wrote to stdout"
    [ -e "$T/out.txt" ] && fail "megatron-core '$s': wrote -o"
    grep -q "^planner: --torch-compile: cluster 'h200x64' runs stack 'megatron-core', whose blocks are fused kernels: nothing to compile (it applies to pytorch-fsdp2)$" \
        "$T/err" || fail "megatron-core '$s': $(cat "$T/err")"
done
# the cluster file's stack: pytorch-fsdp2 takes it, --stack deepspeed refuses it
printf 'stack: pytorch-fsdp2\n' | cat - $C > "$T/fsdp.yaml"
$P -m $M -c "$T/fsdp.yaml" --torch-compile --top 1 | head -1 | grep -q '(torch.compile)$' ||
    fail "stack: pytorch-fsdp2 in the YAML"
$P -m $M -c "$T/fsdp.yaml" --torch-compile --stack deepspeed > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || fail "--stack deepspeed over the YAML's: not exit 2"
grep -q "stack 'deepspeed'" "$T/err" || fail "deepspeed: $(cat "$T/err")"

# 5. planner size takes it (the JSON says so) and refuses it the same way
# (and its usage errors point at 'planner size --help')
$P size -m $M -c $C --stack pytorch-fsdp2 --torch-compile --format json > "$T/out" 2> "$T/err" ||
    fail "size compiled: exit $?: $(cat "$T/err")"
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["cluster"]["torch_compile"] is True' \
    < "$T/out" || fail "size JSON cluster.torch_compile"
$P size -m $M -c $C --torch-compile > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || fail "size on megatron-core: not exit 2"
[ -s "$T/out" ] && fail "size on megatron-core: wrote to stdout"
grep -q "^planner: --torch-compile: cluster 'h200x64' runs stack 'megatron-core'" "$T/err" &&
    grep -q "^Try 'planner size --help' for more information.$" "$T/err" ||
    fail "size on megatron-core: $(cat "$T/err")"
# 6. planner sweep: every point compiled (the same plan, faster), refused
# (exit 2, no -o file) when a cluster file's stack has no eager blocks
$P sweep -m $M -c "$T/fsdp.yaml" --fix $FIX --format jsonl > "$T/se" || fail "sweep eager: exit $?"
$P sweep -m $M -c "$T/fsdp.yaml" --fix $FIX --format jsonl --torch-compile > "$T/sc" ||
    fail "sweep compiled: exit $?"
python3 - "$T/se" "$T/sc" "$T/eager.json" "$T/compiled.json" <<'PY' || fail "sweep eager vs compiled"
import json, sys
se, sc = (json.loads(open(f).read()) for f in sys.argv[1:3])
pe, pc = (json.load(open(f))["strategies"][0] for f in sys.argv[3:5])
assert se["status"] == sc["status"] == "ok", (se, sc)
assert sc["step_time_s"] < 0.95 * se["step_time_s"], (se["step_time_s"], sc["step_time_s"])
for row, plan in ((se, pe), (sc, pc)):   # a sweep point is the plan's search
    assert abs(row["step_time_s"] / plan["step_time_s"] - 1) < 1e-5, (row, plan["step_time_s"])
PY
$P sweep -m $M -c "$T/fsdp.yaml" -c $C --torch-compile -o "$T/sweep.csv" > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || fail "sweep with a megatron-core cluster: not exit 2"
[ -e "$T/sweep.csv" ] && fail "sweep with a megatron-core cluster: wrote -o"
grep -q "^planner: --torch-compile: cluster 'h200x64' runs stack 'megatron-core'" "$T/err" &&
    grep -q "^Try 'planner sweep --help'" "$T/err" || fail "sweep refusal: $(cat "$T/err")"
echo "compile.sh: ok"
