#!/bin/sh
# CLI tests of the inputs: every configs/* model with every clusters/* spec
# loads with --show-inputs (exit 0, nothing on stderr) and prints real figures;
# bad inputs exit 1 with the exact "planner: FILE:LINE:COL: message" of
# tests/bad/*.expect and nothing on stdout; a missing file exits 4; usage
# errors exit 2.  Run from the repository root.
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. every shipped model with every shipped cluster
for m in configs/*.json; do
    for c in clusters/*.yaml; do
        $P --model "$m" --cluster "$c" --show-inputs > "$T/out" 2> "$T/err"
        rc=$?
        [ $rc -eq 0 ] || fail "$m + $c: exit $rc: $(cat "$T/err")"
        [ -s "$T/err" ] && fail "$m + $c: stderr: $(cat "$T/err")"
        grep -q '^Model ' "$T/out" || fail "$m: no model block"
        grep -q '^Cluster ' "$T/out" || fail "$c: no cluster block"
    done
done

# 2. figures derived by hand
out=$($P --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml --show-inputs)
echo "$out" | grep -q 'layers 96, hidden 12288, heads 96' || fail "gpt3 shape"
echo "$out" | grep -q 'tied embeddings yes, residual dropout 0.1 (default)$' || fail "gpt3 dropout: Megatron's"
echo "$out" | grep -q 'parameters 174.6 B' || fail "gpt3 parameters (12Lh^2 + 13Lh + (V+s)h + 2h)"
echo "$out" | grep -q 'global batch 1536 sequences (3.146 M tokens)' || fail "gpt3 batch"
echo "$out" | grep -q 'Cluster h100x512: 512 GPUs in 1 group' || fail "h100x512 total"
echo "$out" | grep -q 'bf16 989 TFLOP/s' || fail "H100 dense bf16"
echo "$out" | grep -q 'inter-node 50.0 GB/s per GPU one-way (400 Gb/s)' || fail "NDR per GPU"
echo "$out" | grep -q '^  stack megatron-core (core_v0.15.0..core_v0.19.0)$' || fail "stack shown"
out=$($P --model configs/llama3-8b.json --cluster clusters/amp-3xp3-1xg4dn.yaml --show-inputs)
echo "$out" | grep -q 'parameters 8.03 B' || fail "llama3-8b parameters"
echo "$out" | grep -q 'seq_len 4096 (default)' || fail "default seq_len shown"
echo "$out" | grep -q 'global batch 1024 sequences (default)' || fail "default batch shown"
echo "$out" | grep -q 'Cluster amp-3xp3-1xg4dn: 16 GPUs in 2 groups' || fail "amp cluster"
echo "$out" | grep -q 'p3 <-> g4dn: 312 MB/s (2.5 Gb/s)' || fail "amp link"
echo "$out" | grep -q '^  stack deepspeed (' || fail "the cluster's stack: shown"
out=$($P --model configs/llama3-8b.json --cluster clusters/h200x64.yaml --stack pytorch-fsdp2 \
      --torch-compile --show-inputs)
echo "$out" | grep -q '^  stack pytorch-fsdp2 (.*), blocks under torch.compile$' ||
    fail "--stack and --torch-compile shown"
out=$($P --model configs/llama3-8b.json --cluster clusters/h200x64.yaml --stack pytorch-fsdp2 \
      --torch-compile --show-inputs --format json)
echo "$out" | grep -q '"stack": "pytorch-fsdp2"' || fail "json stack"
echo "$out" | grep -q '"torch_compile": true' || fail "json torch_compile"
out=$($P --model configs/llama3-8b.json --cluster clusters/h200x64.yaml --show-inputs \
      --seq 8192 --gbs 512)
echo "$out" | grep -q 'seq_len 8192, max_position 8192' || fail "--seq override"
echo "$out" | grep -q 'global batch 512 sequences (4.194 M tokens)' || fail "--gbs override"
out=$($P --model configs/deepseek-v3.json --cluster clusters/h100x512.yaml --show-inputs)
echo "$out" | grep -q 'MoE: 256 experts, top-8' || fail "deepseek moe"
echo "$out" | grep -q 'parameters 671 B' || fail "deepseek total"
echo "$out" | grep -q 'active per token 37.55 B' || fail "deepseek active"
out=$($P --model configs/llama3-8b.json --cluster clusters/h100x512.yaml --show-inputs \
      --precision fp8 --seq 32768 2> "$T/err")
echo "$out" | grep -q 'precision fp8 (runs at the fp8 peak)' || fail "--precision fp8"
echo "$out" | grep -q 'seq_len 32768, max_position 8192' || fail "--seq past max_position"
grep -q '^planner: configs/llama3-8b.json: warning: sequence length 32768 (from --seq) exceeds max_position 8192' \
    "$T/err" || fail "--seq past max_position: no warning"
# planner size prints the model file's warnings as planning does
$P size --model configs/llama3-8b.json --cluster clusters/h200x64.yaml --seq 16384 \
    > /dev/null 2> "$T/err" || fail "size --seq past max_position: exit $?"
grep -q '^planner: configs/llama3-8b.json: warning: sequence length 16384 (from --seq) exceeds' \
    "$T/err" || fail "size --seq past max_position: no warning"
$P --model configs/llama3-8b.json --cluster clusters/h100x512.yaml --precision fp32 \
    --show-inputs 2> /dev/null
[ $? -eq 2 ] || fail "--precision fp32: expected exit 2"
# an unknown model_type is refused; --guess-model-type reads it by its keys
# and warns, naming the guess
out=$($P --model tests/bad/model-hf-unknown-llama-keys.json --cluster clusters/h100x512.yaml \
      --guess-model-type --show-inputs 2> "$T/err") || fail "--guess-model-type: exit $?"
echo "$out" | grep -q 'layers 2, hidden 64, heads 4' || fail "--guess-model-type shape"
echo "$out" | grep -q 'residual dropout 0$' || fail "HF Llama-style layers: no residual dropout"
grep -q "warning: model_type 'my_llama' is not a known family: read as llama by its keys" \
    "$T/err" || fail "--guess-model-type: no warning naming the guess"
# --show-inputs --format json: the same figures for scripts
$P --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml --show-inputs --format json \
    > "$T/si.json" || fail "--show-inputs --format json: exit $?"
grep -q '"layers": 96,' "$T/si.json" || fail "show-inputs json: layers"
grep -q '"parameters": 174615846912.0,' "$T/si.json" || fail "show-inputs json: parameters"
grep -q '"gpus": 512,' "$T/si.json" || fail "show-inputs json: cluster gpus"

# 3. bad inputs: exit 1, the exact message on stderr, nothing on stdout
n=0
for f in tests/bad/*.json tests/bad/*.yaml; do
    case $f in
        *.json) args="--model $f --cluster clusters/h100x512.yaml" ;;
        *) args="--model configs/gpt3-175b.json --cluster $f" ;;
    esac
    # shellcheck disable=SC2086
    $P $args --show-inputs > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 1 ] || fail "$f: exit $rc, expected 1"
    [ -s "$T/out" ] && fail "$f: wrote to stdout"
    expect=$(cat "${f%.*}.expect")
    [ "$(cat "$T/err")" = "$expect" ] || fail "$f: got '$(cat "$T/err")', expected '$expect'"
    n=$((n + 1))
done
[ $n -ge 40 ] || fail "only $n bad inputs"

# 4. I/O errors exit 4
$P --model configs/no-such.json --cluster clusters/h100x512.yaml --show-inputs 2> "$T/err"
[ $? -eq 4 ] || fail "missing model: expected exit 4"
grep -q '^planner: configs/no-such.json: cannot open: ' "$T/err" || fail "missing model message"
$P --model configs/gpt3-175b.json --cluster clusters/no-such.yaml --show-inputs 2> /dev/null
[ $? -eq 4 ] || fail "missing cluster: expected exit 4"
$P --model configs --cluster clusters/h100x512.yaml --show-inputs 2> /dev/null
[ $? -eq 4 ] || fail "directory as model: expected exit 4"
# a name neither a file nor shipped: exit 4 as a missing file, naming what
# was asked and the closest shipped name (plan and size, tool/shipped.c)
$P --model llama3-7b --cluster h100x512 2> "$T/err"
[ $? -eq 4 ] || fail "unknown model name: expected exit 4"
[ "$(cat "$T/err")" = "planner: 'llama3-7b': no such file, and no shipped model of that name \
(did you mean 'llama3-70b'?)" ] || fail "unknown model name: $(cat "$T/err")"
# a shipped name with its extension, from another folder, resolves too
(d=$(pwd) && cd "$T" && "$d/$P" --model llama3-8b.json --cluster h100x512.yaml --show-inputs \
    > /dev/null) ||
    fail "shipped names with their extensions from another folder"
# the README's paths run from another folder: exit 4, the missing file and
# the shipped name that finds it (plan, size, sweep)
for cmd in "" size sweep; do
    (d=$(pwd) && cd "$T" && "$d/$P" $cmd --model configs/llama3-8b.json --cluster h100x512 \
        > /dev/null 2> "$T/err")
    [ $? -eq 4 ] || fail "'$cmd' configs/llama3-8b.json from another folder: expected exit 4"
    [ "$(cat "$T/err")" = "planner: configs/llama3-8b.json: cannot open: No such file or \
directory (the shipped model of that name is '--model llama3-8b', from any folder)" ] ||
        fail "'$cmd' configs/llama3-8b.json from another folder: $(cat "$T/err")"
done
(d=$(pwd) && cd "$T" && "$d/$P" --model llama3-8b --cluster clusters/h100x512.yaml \
    > /dev/null 2> "$T/err")
grep -qxF "planner: clusters/h100x512.yaml: cannot open: No such file or directory (the shipped \
cluster of that name is '--cluster h100x512', from any folder)" "$T/err" ||
    fail "clusters/h100x512.yaml from another folder: $(cat "$T/err")"
$P size --model llama3-8b --cluster h100x51 2> "$T/err"
[ $? -eq 4 ] || fail "size, unknown cluster name: expected exit 4"
[ "$(cat "$T/err")" = "planner: 'h100x51': no such file, and no shipped cluster of that name \
(did you mean 'h100x512'?)" ] || fail "size, unknown cluster name: $(cat "$T/err")"
$P --model gpt3-175b --cluster nothing-like-it 2> "$T/err"
[ $? -eq 4 ] || fail "unknown cluster name: expected exit 4"
grep -qx "planner: 'nothing-like-it': no such file, and no shipped cluster of that name" "$T/err" ||
    fail "unknown cluster name, no suggestion: $(cat "$T/err")"

# 5. usage errors exit 2
$P --model configs/gpt3-175b.json --show-inputs 2> /dev/null
[ $? -eq 2 ] || fail "missing --cluster: expected exit 2"
$P --cluster clusters/h100x512.yaml --show-inputs 2> /dev/null
[ $? -eq 2 ] || fail "missing --model: expected exit 2"
$P --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml --seq 0 --show-inputs \
    2> /dev/null
[ $? -eq 2 ] || fail "--seq 0: expected exit 2"
$P --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml --bogus 2> /dev/null
[ $? -eq 2 ] || fail "unknown option: expected exit 2"
echo "inputs.sh: ok ($n bad inputs)"
