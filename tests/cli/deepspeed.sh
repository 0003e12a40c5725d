#!/bin/sh
# CLI tests of the launch material on the deepspeed stack: --emit deepspeed
# (the DeepSpeed JSON config) and --emit slurm|torchrun (Megatron-DeepSpeed's
# pretrain_gpt.py with its arguments and that config, written on each node).
# The config's values for a pinned plan are derived by hand; every flag the
# scripts pass is one of Megatron-DeepSpeed f4157be's
# (tests/data/megatron-flags/megatron-deepspeed-f4157be.txt); the scripts run
# end to end against a stand-in torchrun; plans DeepSpeed has no option for,
# and kinds that do not launch the stack, are refused with no output file.
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

GPT3=configs/gpt3-175b.json
H100=clusters/h100x512.yaml
DSFLAGS=tests/data/megatron-flags/megatron-deepspeed-f4157be.txt
for f in "$GPT3" "$H100" configs/llama3-8b.json configs/mixtral-8x7b.json configs/amp-gpt2.json \
    clusters/amp-4xg4dn.yaml "$DSFLAGS"; do
    [ -f "$f" ] || { echo "SKIP deepspeed.sh: $f absent"; exit 77; }
done

# json_check FILE PYTHON-ASSERTIONS: FILE parsed as JSON into d
json_check() {
    python3 - "$1" "$2" <<'EOF' || fail "$1: JSON values"
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
exec(sys.argv[2])
EOF
}

# ds_flags FILE: every flag of MEGATRON_ARGS=( ... ) is Megatron-DeepSpeed's
ds_flags() {
    sed -n '/^MEGATRON_ARGS=(/,/^)/p' "$1" | grep -o '^ *--[a-z0-9_-]*' | tr -d ' ' \
        > "$T/flags"
    [ -s "$T/flags" ] || fail "$1: no flags"
    while read -r flag; do
        grep -qx -- "$flag" "$DSFLAGS" || fail "$1: $flag is not a Megatron-DeepSpeed flag"
    done < "$T/flags"
}

# 1. GPT-3 175B on 512 H100s, tp 4, pp 8 (dp = 512 / 32 = 16), mbs 1, ZeRO-1:
# train_batch_size 1536 = 1 x 96 x 16 (96 accumulation steps), the stack's
# 5e8-element bucket; no overlap_comm (the stack overlaps no ZeRO-1 reduce
# nor any under its pipeline engine: stack_grad_reduce_overlaps)
FIX=tp=4,pp=8,mbs=1,zero=1,overlap_grad_reduce=off,overlap_param_gather=off,recompute=none
$P -m $GPT3 -c $H100 --stack deepspeed --fix $FIX --emit deepspeed > "$T/gpt3.json" ||
    fail "--emit deepspeed exit $?"
json_check "$T/gpt3.json" '
assert d == {"train_batch_size": 1536, "train_micro_batch_size_per_gpu": 1,
             "gradient_accumulation_steps": 96,
             "zero_optimization": {"stage": 1, "overlap_comm": False,
                                   "reduce_bucket_size": 500000000},
             "bf16": {"enabled": True}, "gradient_clipping": 1.0, "steps_per_print": 1}, d
assert d["train_batch_size"] == d["train_micro_batch_size_per_gpu"] * \
    d["gradient_accumulation_steps"] * 16'

# 2. The scripts: Megatron-DeepSpeed's flags only, the plan's degrees, and end
# to end with a stand-in torchrun that records its arguments and the config
# the node wrote (it is --emit deepspeed's)
mkdir "$T/bin"
cat > "$T/bin/torchrun" <<'EOF'
#!/bin/sh
printf '%s\n' "$@" > "$REC/args"
while [ $# -gt 0 ]; do
    [ "$1" = --deepspeed_config ] && cp "$2" "$REC/ds.json"
    shift
done
EOF
chmod +x "$T/bin/torchrun"
for kind in slurm torchrun; do
    $P -m $GPT3 -c $H100 --stack deepspeed --fix $FIX --emit $kind > "$T/gpt3.$kind" ||
        fail "--emit $kind exit $?"
    bash -n "$T/gpt3.$kind" || fail "$kind: bash -n"
    if command -v shellcheck > /dev/null 2>&1; then
        shellcheck "$T/gpt3.$kind" || fail "$kind: shellcheck"
    else
        echo "SKIP deepspeed.sh shellcheck: not installed"
    fi
    ds_flags "$T/gpt3.$kind"
    grep -q '^# .*for Megatron-DeepSpeed f4157be, from planner' "$T/gpt3.$kind" ||
        fail "$kind: header"
    for a in '--tensor-model-parallel-size 4' '--pipeline-model-parallel-size 8' \
        '--micro-batch-size 1' '--global-batch-size 1536' '--zero-stage 1' '--bf16' \
        '--deepspeed' '--deepspeed_config "$DS_CONFIG"'; do
        grep -qxF "    $a" "$T/gpt3.$kind" || fail "$kind: no '$a'"
    done
    grep -q -- '--no-pipeline-parallel\|CUDA_DEVICE_MAX_CONNECTIONS' "$T/gpt3.$kind" &&
        fail "$kind: --no-pipeline-parallel with pp 8, or Megatron's env rule"
done
mkdir "$T/rec"
env PATH="$T/bin:$PATH" REC="$T/rec" NODE_RANK=0 MASTER_ADDR=node0 \
    MEGATRON_DEEPSPEED_DIR=/opt/mds DATA_PATH=/data/d TOKENIZER_MODEL=/data/tok \
    CHECKPOINT_DIR=/data/ckpt DS_CONFIG="$T/node.json" bash "$T/gpt3.torchrun" \
    > /dev/null 2> "$T/err" || fail "torchrun script: $(cat "$T/err")"
sed -n 6p "$T/rec/args" | grep -qx /opt/mds/pretrain_gpt.py || fail "the program run"
grep -qx -- "$T/node.json" "$T/rec/args" || fail "--deepspeed_config's path"
cmp -s "$T/rec/ds.json" "$T/gpt3.json" || fail "the node's config differs from --emit deepspeed's"

# 3. Llama 3 8B (pp 1) and Mixtral 8x7B: the plain GPTModel, the Llama
# architecture flags, the MoE layers (every layer: interval 1), the experts'
# parameter group ZeRO needs
$P -m configs/llama3-8b.json -c $H100 --stack deepspeed --fix tp=1,pp=1,zero=1 \
    --fix overlap_param_gather=off --emit torchrun > "$T/llama.sh" || fail "llama exit $?"
ds_flags "$T/llama.sh"
for a in --no-pipeline-parallel '--num-key-value-heads 8' --swiglu '--normalization rmsnorm' \
    --use-rotary-position-embeddings --no-position-embedding \
    '--rotary-position-embeddings-theta 500000' --untie-embeddings-and-output-weights \
    --disable-bias-linear; do
    grep -qxF "    $a" "$T/llama.sh" || fail "llama: no '$a'"
done
$P -m configs/mixtral-8x7b.json -c $H100 --stack deepspeed --fix ep=8,etp=1,zero=1 \
    --fix overlap_param_gather=off --emit slurm > "$T/mixtral.sh" || fail "mixtral exit $?"
ds_flags "$T/mixtral.sh"
for a in '--num-experts 8' '--topk 2' '--expert-interval 1' '--moe-expert-parallel-size 8' \
    --create-moe-param-group; do
    grep -qxF "    $a" "$T/mixtral.sh" || fail "mixtral: no '$a'"
done

# DeepSpeed-MoE splits no expert over TP ranks and takes ep from dp: the
# stack's rules, so the search refuses them under --fix (exit 3, DeepSpeed's
# rule in the advice) and --emit never sees them
$P -m configs/mixtral-8x7b.json -c $H100 --stack deepspeed --fix tp=2,ep=8,etp=2,zero=1 \
    --fix overlap_param_gather=off --emit deepspeed -o "$T/no.json" > /dev/null 2> "$T/err"
[ $? -eq 3 ] && [ ! -e "$T/no.json" ] &&
    grep -q "^advice: no strategy satisfies DeepSpeed's rules under --fix; .*: DeepSpeed's MoE keeps every expert whole on each tensor-parallel rank (no expert tensor parallelism): plan with --fix etp=1, not etp=2$" \
    "$T/err" || fail "etp 2: $(cat "$T/err")"

# 4. fp16 on T4s and V100s (no bf16): DeepSpeed's dynamic loss scaling from 2^16
$P -m configs/amp-gpt2.json -c clusters/amp-4xg4dn.yaml --fix overlap_param_gather=off \
    --emit deepspeed > "$T/amp.json" || fail "amp exit $?"
json_check "$T/amp.json" '
assert d["fp16"] == {"enabled": True, "loss_scale": 0, "initial_scale_power": 16}, d
assert "bf16" not in d'

# 5. Refusals: exit 1, the reason, no file
# (the overlapped gather is no knob of the stack: DeepSpeed's ZeRO-1/2 gather
# inside the optimizer step, inputs/stack.c; a usage error, exit 2)
$P -m $GPT3 -c $H100 --stack deepspeed --fix tp=4,pp=8,mbs=1,zero=1,overlap_param_gather=on \
    --emit deepspeed -o "$T/no.json" > /dev/null 2> "$T/err"
[ $? -eq 2 ] && [ ! -e "$T/no.json" ] || fail "ZeRO-1 overlapped gather: not refused"
grep -q "the deepspeed stack has no overlap_param_gather=on (it has: off)" \
    "$T/err" || fail "gather message: $(cat "$T/err")"
$P -m $GPT3 -c $H100 --stack deepspeed \
    --fix tp=4,pp=8,mbs=1,zero=2,overlap_param_gather=off,recompute=full,recompute_layers=0 \
    --emit slurm > /dev/null 2> "$T/err"
# the stack's rule (STACK_RULE_SHARD_NO_PIPE): the search finds no plan (exit 3)
[ $? -eq 3 ] && grep -q 'ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism' "$T/err" ||
    fail "ZeRO-2 with pp: $(cat "$T/err")"
$P -m configs/pythia-12b.json -c $H100 --stack deepspeed --fix overlap_param_gather=off \
    --emit deepspeed > /dev/null 2> "$T/err"
[ $? -eq 1 ] && grep -q 'the Megatron-DeepSpeed flags do not carry its parallel attention+MLP block' \
    "$T/err" || fail "GPT-NeoX block: $(cat "$T/err")"
# kinds that do not launch the stack: usage errors
$P -m $GPT3 -c $H100 --emit deepspeed > /dev/null 2> "$T/err"
[ $? -eq 2 ] && grep -q "which --emit deepspeed does not launch (it launches deepspeed); this stack has --emit megatron, slurm, torchrun$" \
    "$T/err" || fail "--emit deepspeed on megatron-core: $(cat "$T/err")"
echo "deepspeed.sh: ok"
