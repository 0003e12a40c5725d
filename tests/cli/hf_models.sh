#!/bin/sh
# CLI tests of real HuggingFace configs (../shared/hf-configs; SKIP when
# absent): the report is titled with the model's name, a vision-language
# config warns that its vision tower is not modelled, a state-space model is
# refused by name (exit 1), and --emit refuses an architecture the Megatron
# flags do not carry rather than launch a different model.  Run from the
# repository root.
set -u
P=./planner
H=${PLANNER_SHARED:-../shared}/hf-configs
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -d "$H" ] || { echo "SKIP: $H absent"; exit 0; }

# the title: _name_or_path when it is a hub id, else the directory
$P --model "$H/phi-2/config.json" --cluster clusters/h100x512.yaml --top 1 > "$T/out" \
    2> "$T/err" || fail "phi-2: exit $?"
head -n 1 "$T/out" | grep -q '^microsoft/phi-2 on h100x512: ' || fail "phi-2 title: $(head -n 1 "$T/out")"
$P --model "$H/qwen2.5-7b/config.json" --cluster clusters/h100x512.yaml --top 1 > "$T/out" \
    2> "$T/err" || fail "qwen2.5-7b: exit $?"
head -n 1 "$T/out" | grep -q '^qwen2.5-7b on h100x512: ' || fail "qwen2.5-7b title"
[ -s "$T/err" ] && fail "qwen2.5-7b: stderr: $(cat "$T/err")"

# vision-language: the language model is planned, with a warning
$P --model "$H/qwen2.5-vl-3b/config.json" --cluster clusters/h100x512.yaml --show-inputs \
    > "$T/out" 2> "$T/err" || fail "qwen2.5-vl-3b: exit $?"
grep -q 'parameters 3.086 B (embedding 0.3112 B, tied output)' "$T/out" || fail "qwen2.5-vl-3b LM"
grep -q 'warning: Qwen2.5-VL is a vision-language model: its language model is planned; the vision tower (vision_config) is not modelled' \
    "$T/err" || fail "qwen2.5-vl-3b: no vision-tower warning"

# state-space: refused by name, nothing on stdout
$P --model "$H/falcon-mamba-7b/config.json" --cluster clusters/h100x512.yaml > "$T/out" 2> "$T/err"
[ $? -eq 1 ] || fail "falcon-mamba: expected exit 1"
[ -s "$T/out" ] && fail "falcon-mamba: wrote to stdout"
grep -q "Falcon Mamba (model_type 'falcon_mamba'): state-space models are not supported" \
    "$T/err" || fail "falcon-mamba message: $(cat "$T/err")"

# emit: Gemma 2's GeGLU MLP and sliding windows have no flags yet: refused
$P --model "$H/gemma2-9b/config.json" --cluster clusters/h100x512.yaml --emit megatron \
    > "$T/out" 2> "$T/err"
[ $? -eq 1 ] || fail "gemma2 emit: expected exit 1"
grep -q 'cannot emit launch material: the Megatron flags do not carry its GeGLU MLP' \
    "$T/err" || fail "gemma2 emit message: $(cat "$T/err")"
echo "hf_models.sh: ok"
