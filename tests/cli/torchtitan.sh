#!/bin/sh
# CLI tests of the torchtitan launch material on the pytorch-fsdp2 stack:
# --emit torchtitan (the v0.2.2 job config TOML), --emit slurm|torchrun (the
# scripts that write it on each node and run torchtitan.train with it).
# The TOML's values for pinned plans are derived by hand from the plan and
# torchtitan v0.2.2's options (src/out/emit_torchtitan.c); the scripts run
# end to end against stand-in torchrun, srun and scontrol commands, which
# record what they were given; hostile model and cluster names stay data;
# plans torchtitan has no option for, and kinds that do not launch a stack,
# are refused with no output file.
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

M70=configs/llama3-70b.json
H100=clusters/h100x512.yaml
for f in "$M70" "$H100" configs/llama3-8b.json configs/pythia-12b.json configs/gpt2-xl.json \
    clusters/h200x64.yaml \
    clusters/h100-a100-mixed.yaml; do
    [ -f "$f" ] || { echo "SKIP torchtitan.sh: $f absent"; exit 77; }
done
if python3 -c 'import tomllib' 2> /dev/null; then
    HAVE_TOML=1
else
    HAVE_TOML=0
    echo "SKIP torchtitan.sh TOML parsing: python3 has no tomllib; checking lines"
fi

# toml_check FILE PYTHON-ASSERTIONS: parses FILE as TOML into d and runs the
# assertions (skipped without tomllib; the grep checks below still run)
toml_check() {
    [ $HAVE_TOML -eq 1 ] || return 0
    python3 - "$1" "$2" <<'EOF' || fail "$1: TOML values"
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    d = tomllib.load(f)
exec(sys.argv[2])
EOF
}

# 1. Llama 3 70B on 512 H100s pinned to tp 4, pp 2, vpp 5 (dp = 512 / 8 =
# 64), mbs 2, ZeRO-2, compiled blocks: the DP rank's batch is 1024 / 64 =
# 16 sequences in micro-batches of 2 (8 per step); 2 x 5 = 10 virtual stages
# of 80 / 10 = 8 layers, stage k = chunk x 2 + rank holding layers 8k..8k+7
# (chunk-major, as Megatron's interleaving); ZeRO-2 keeps the gathered
# weights after forward ("never"); async TP (tp_comm_overlap) with the model
# compiled; the llama3 70B flavor.
FIX=tp=4,pp=2,vpp=5,mbs=2,zero=2,cp=1,recompute=none,tp_comm_overlap=on
$P -m $M70 -c $H100 --stack pytorch-fsdp2 --torch-compile --fix $FIX --emit torchtitan \
    > "$T/70b.toml" || fail "--emit torchtitan exit $?"
head -1 "$T/70b.toml" | grep -q '^# torchtitan v0.2.2 job config, from planner' ||
    fail "70b: header"
grep -q '^# plan: tp=4 pp=2 dp=64 cp=1 ep=1 vpp=5 mbs=2 gbs=1024 seq=4096 ' "$T/70b.toml" ||
    fail "70b: plan line"
for line in 'name = "llama3"' 'flavor = "70B"' 'local_batch_size = 16' \
    'global_batch_size = 1024' 'seq_len = 4096' 'data_parallel_shard_degree = 64' \
    'data_parallel_replicate_degree = 1' 'tensor_parallel_degree = 4' \
    'pipeline_parallel_degree = 2' 'pipeline_parallel_schedule = "Interleaved1F1B"' \
    'pipeline_parallel_microbatch_size = 2' 'enable_async_tensor_parallel = true' \
    'fsdp_reshard_after_forward = "never"' 'context_parallel_degree = 1' 'mode = "none"' \
    'components = ["model"]'; do
    grep -qxF "$line" "$T/70b.toml" || fail "70b: no line '$line'"
done
toml_check "$T/70b.toml" '
p = d["parallelism"]
parts = p["module_fqns_per_model_part"]
assert len(parts) == 10, len(parts)
for k, part in enumerate(parts):
    layers = [m for m in part if m.startswith("layers.")]
    assert layers == ["layers.%d" % i for i in range(8 * k, 8 * k + 8)], (k, part)
assert parts[0][0] == "tok_embeddings" and parts[-1][-2:] == ["norm", "output"]
assert d["model"]["name"] == "llama3" and d["model"]["flavor"] == "70B"
t = d["training"]
assert (t["local_batch_size"], t["global_batch_size"], t["seq_len"]) == (16, 1024, 4096)
assert t["mixed_precision_param"] == "bfloat16"
assert (p["data_parallel_replicate_degree"], p["data_parallel_shard_degree"],
        p["tensor_parallel_degree"], p["pipeline_parallel_degree"],
        p["context_parallel_degree"]) == (1, 64, 4, 2, 1)
# torchtitan: world = dp_replicate dp_shard cp tp pp; gradient accumulation
# global / (local x batch degree) = 1 with pp; micro-batches local / mbs = 8
assert 1 * 64 * 1 * 4 * 2 == 512
assert t["global_batch_size"] // (t["local_batch_size"] * 64) == 1
assert t["local_batch_size"] // p["pipeline_parallel_microbatch_size"] == 8
assert p["enable_async_tensor_parallel"] is True
assert d["compile"] == {"enable": True, "components": ["model"]}
assert d["activation_checkpoint"] == {"mode": "none"}
assert "quantize" not in d
assert d["job"]["description"] == "planner: llama3-70b on h100x512"'

# 2. Llama 3 8B in FP8 with cp 2, ZeRO-3 (dp = 512 / 2 = 256), no pp: one
# micro-batch per step and rank (local = mbs 1), gradient accumulation 1024 /
# (1 x 256) = 4; the FP8 primary weights the plan counts are FSDP's float8
# all-gather; the output layer stays 16-bit; cp's ring is the alltoall
# rotation; full recompute of every layer is mode "full".
$P -m configs/llama3-8b.json -c $H100 --stack pytorch-fsdp2 --precision fp8 \
    --fix tp=1,pp=1,cp=2,mbs=1,zero=3,recompute=full,recompute_layers=0 --emit torchtitan \
    > "$T/8b.toml" || fail "fp8 cp2 exit $?"
toml_check "$T/8b.toml" '
p, t = d["parallelism"], d["training"]
assert (p["data_parallel_shard_degree"], p["context_parallel_degree"]) == (256, 2)
assert p["context_parallel_rotate_method"] == "alltoall"
assert p["fsdp_reshard_after_forward"] == "always"
assert "pipeline_parallel_schedule" not in p and "module_fqns_per_model_part" not in p
assert (t["local_batch_size"], t["global_batch_size"]) == (1, 1024)
assert d["model"]["flavor"] == "8B"
assert d["model"]["converters"] == ["quantize.linear.float8"]
f8 = d["quantize"]["linear"]["float8"]
assert f8 == {"enable_fsdp_float8_all_gather": True,
              "precompute_float8_dynamic_scale_for_fsdp": True, "filter_fqns": ["output"]}
assert d["activation_checkpoint"] == {"mode": "full"}
assert "compile" not in d'
grep -qxF 'converters = ["quantize.linear.float8"]' "$T/8b.toml" || fail "fp8: converters"
grep -qxF 'context_parallel_rotate_method = "alltoall"' "$T/8b.toml" || fail "cp rotate"

# 3. ZeRO-0 on data parallelism alone is DDP (GPT-2 XL): 64 replicas, no sharding;
# selective recompute is torchtitan's op-level policy
$P -m configs/gpt2-xl.json -c clusters/h200x64.yaml --stack pytorch-fsdp2 \
    --fix tp=1,pp=1,cp=1,zero=0,recompute=selective --emit torchtitan > "$T/ddp.toml" ||
    fail "ddp exit $?"
toml_check "$T/ddp.toml" '
p = d["parallelism"]
assert (p["data_parallel_replicate_degree"], p["data_parallel_shard_degree"]) == (64, 1)
assert "fsdp_reshard_after_forward" not in p
assert d["activation_checkpoint"] == {"mode": "selective", "selective_ac_option": "op"}'
grep -qxF 'data_parallel_replicate_degree = 64' "$T/ddp.toml" || fail "ddp: replicate"
# GPT-2 has no flavor and no RoPE: the placeholder names its learned positions,
# GELU, LayerNorm, biases and tied embeddings, not a RoPE theta
grep -qxF '# vocabulary 50257, learned absolute positions, gelu MLP, LayerNorm, biases, tied embeddings,' \
    "$T/ddp.toml" || fail "ddp: the placeholder's architecture"
grep -q 'RoPE' "$T/ddp.toml" && fail "ddp: a RoPE theta for a model without RoPE"

# 4. The scripts, end to end with stand-ins: torchrun records its arguments
# and the job config the node wrote; srun runs its command here as node 0;
# scontrol names one host.  The config torchtitan reads is --emit torchtitan's.
mkdir "$T/bin"
cat > "$T/bin/torchrun" <<'EOF'
#!/bin/sh
printf '%s\n' "$@" > "$REC/args"
while [ $# -gt 0 ]; do
    [ "$1" = --job.config_file ] && cp "$2" "$REC/job.toml"
    shift
done
EOF
cat > "$T/bin/srun" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
SLURM_NODEID=0 exec "$@"
EOF
printf '#!/bin/sh\necho node0\n' > "$T/bin/scontrol"
chmod +x "$T/bin/torchrun" "$T/bin/srun" "$T/bin/scontrol"
sed -n '/^\[job\]/,$p' "$T/70b.toml" > "$T/70b.body"
for kind in slurm torchrun; do
    $P -m $M70 -c $H100 --stack pytorch-fsdp2 --torch-compile --fix $FIX --emit $kind \
        > "$T/70b.$kind" || fail "--emit $kind exit $?"
    bash -n "$T/70b.$kind" || fail "$kind: bash -n"
    if command -v shellcheck > /dev/null 2>&1; then
        shellcheck "$T/70b.$kind" || fail "$kind: shellcheck"
    else
        echo "SKIP torchtitan.sh shellcheck: not installed"
    fi
    mkdir "$T/rec-$kind"
    # the placeholders are refused first, before any torchrun
    env PATH="$T/bin:$PATH" REC="$T/rec-$kind" SLURM_NNODES=64 SLURM_JOB_NODELIST=node0 \
        NODE_RANK=0 MASTER_ADDR=node0 bash "$T/70b.$kind" > /dev/null 2> "$T/err"
    [ $? -eq 1 ] && grep -q 'set HF_ASSETS_PATH (still the placeholder' "$T/err" &&
        [ ! -e "$T/rec-$kind/args" ] || fail "$kind: placeholders not refused"
    env PATH="$T/bin:$PATH" REC="$T/rec-$kind" SLURM_NNODES=64 SLURM_JOB_NODELIST=node0 \
        NODE_RANK=0 MASTER_ADDR=node0 HF_ASSETS_PATH=/data/hf DUMP_FOLDER=/data/out \
        JOB_CONFIG="$T/node-$kind.toml" bash "$T/70b.$kind" > /dev/null 2> "$T/err" ||
        fail "$kind: the script failed: $(cat "$T/err")"
    printf '%s\n' --nproc_per_node=8 --nnodes=64 > "$T/want"
    for a in -m torchtitan.train --job.config_file "$T/node-$kind.toml" --job.dump_folder \
        /data/out --model.hf_assets_path /data/hf; do
        printf '%s\n' "$a" >> "$T/want"
    done
    grep -vx -- '--node_rank=0\|--master_addr=node0\|--master_port=6000' "$T/rec-$kind/args" |
        cmp -s - "$T/want" || fail "$kind: torchrun arguments: $(cat "$T/rec-$kind/args")"
    sed -n '/^\[job\]/,$p' "$T/rec-$kind/job.toml" | cmp -s - "$T/70b.body" ||
        fail "$kind: the node's job config differs from --emit torchtitan's"
done
# Without JOB_CONFIG each node writes a private mktemp file under $TMPDIR,
# never a fixed /tmp name another user could have planted as a symlink
grep -q '/tmp/planner-' "$T/70b.torchrun" "$T/70b.slurm" && fail "a fixed /tmp config path"
mkdir "$T/rec-tmp" "$T/tmp"
env PATH="$T/bin:$PATH" REC="$T/rec-tmp" NODE_RANK=0 MASTER_ADDR=node0 TMPDIR="$T/tmp" \
    HF_ASSETS_PATH=/data/hf DUMP_FOLDER=/data/out bash "$T/70b.torchrun" > /dev/null 2> "$T/err" ||
    fail "torchrun without JOB_CONFIG: $(cat "$T/err")"
cfg=$(sed -n '/^--job.config_file$/{n;p;}' "$T/rec-tmp/args")
case "$cfg" in
    "$T/tmp/planner-torchtitan."*.toml) ;;
    *) fail "torchrun without JOB_CONFIG: config at '$cfg', not a mktemp file in \$TMPDIR" ;;
esac
[ "$(stat -c %a "$cfg")" = 600 ] || fail "the node's config file is not private: $(stat -c %a "$cfg")"
sed -n '/^\[job\]/,$p' "$T/rec-tmp/job.toml" | cmp -s - "$T/70b.body" ||
    fail "torchrun without JOB_CONFIG: the job config differs from --emit torchtitan's"
grep -q '^# sbatch script for torchtitan v0.2.2, from planner' "$T/70b.slurm" ||
    fail "slurm header"
grep -q CUDA_DEVICE_MAX_CONNECTIONS "$T/70b.slurm" && fail "slurm: Megatron's env rule"

# 5. A model torchtitan has no flavor for: placeholders with its shape, and
# the script refuses to run until they are named
$P -m configs/pythia-12b.json -c $H100 --stack pytorch-fsdp2 --fix tp=1,pp=1,zero=3 \
    --emit torchrun > "$T/pythia.sh" || fail "pythia exit $?"
grep -qxF 'name = "PLACEHOLDER-model"' "$T/pythia.sh" || fail "pythia: model placeholder"
grep -q '^# 36 layers, dim 5120, 40 heads, 40 KV heads, FFN 20480,' "$T/pythia.sh" ||
    fail "pythia: the shape to register"
grep -q '^# vocabulary 50688, RoPE theta 10000, gelu MLP, LayerNorm, biases,$' "$T/pythia.sh" ||
    fail "pythia: the architecture to register"
mkdir "$T/rec-pythia"
env PATH="$T/bin:$PATH" REC="$T/rec-pythia" NODE_RANK=0 MASTER_ADDR=node0 \
    HF_ASSETS_PATH=/data/hf DUMP_FOLDER=/data/out JOB_CONFIG="$T/p.toml" \
    bash "$T/pythia.sh" > /dev/null 2> "$T/err"
[ $? -eq 1 ] && grep -q 'PLACEHOLDER-model' "$T/err" && [ ! -e "$T/rec-pythia/args" ] ||
    fail "pythia: the placeholder model was launched"

# 6. Hostile model and cluster names stay data: shell-quoted in comments,
# a TOML string in the config, never run (no PWNED file)
hm="$T/a'\$(touch PWNED)\"b\`touch PWNED\`.json"
cp configs/llama3-8b.json "$hm"
sed "s/^name: h200x64/name: \"c\$(touch PWNED)\\\\\"q'\"/" clusters/h200x64.yaml > "$T/c.yaml"
for kind in torchtitan slurm torchrun; do
    (cd "$T" && "$OLDPWD/planner" -m "$hm" -c c.yaml --stack pytorch-fsdp2 \
        --fix tp=1,pp=1,zero=3 --emit $kind) > "$T/hostile.$kind" || fail "hostile $kind: exit $?"
done
toml_check "$T/hostile.torchtitan" '
want = "planner: a\x27$(touch PWNED)\"b`touch PWNED` on c$(touch PWNED)\"q\x27"
assert d["job"]["description"] == want, d["job"]["description"]'
bash -n "$T/hostile.slurm" && bash -n "$T/hostile.torchrun" || fail "hostile: bash -n"
mkdir "$T/rec-hostile"
(cd "$T" && env PATH="$T/bin:$PATH" REC="$T/rec-hostile" NODE_RANK=0 MASTER_ADDR=node0 \
    HF_ASSETS_PATH=/data/hf DUMP_FOLDER=/data/out JOB_CONFIG="$T/h.toml" \
    bash "$T/hostile.torchrun" > /dev/null 2>&1) || fail "hostile torchrun script failed"
[ ! -e "$T/PWNED" ] || fail "a hostile name ran"
grep -q 'touch' "$T/rec-hostile/job.toml" || fail "hostile: the name did not reach the config"

# 7. Heterogeneous plans (stages on two node groups) launch as a Slurm
# heterogeneous job: torchtitan's mesh is pp-outermost like Megatron's
$P -m $M70 -c clusters/h100-a100-mixed.yaml --stack pytorch-fsdp2 --torch-compile \
    --emit slurm > "$T/het.sh" || fail "het exit $?"
bash -n "$T/het.sh" || fail "het: bash -n"
grep -q "stage map (torchtitan's mesh order tp-cp-dp-pp, pp outermost" "$T/het.sh" ||
    fail "het: stage map"
grep -q 'printf "%s" "$JOB_TOML" > "$JOB_CONFIG" && exec torchrun' "$T/het.sh" ||
    fail "het: each node writes the config"

# 8. Refusals, exit status and message, no output file
# (a) knobs torchtitan has no option for are outside the pytorch-fsdp2
# stack's knob set (inputs/stack.c rules): the search refuses them under
# --fix (exit 3, the rule in the advice), so --emit never sees them
$P -m $M70 -c $H100 --stack pytorch-fsdp2 --fix $FIX --emit torchtitan -o "$T/no.toml" \
    > "$T/out" 2> "$T/err"
[ $? -eq 3 ] || fail "async TP without compile: not refused"
grep -q "^advice: .*: torchtitan's async tensor parallelism (the plan's tp_comm_overlap) runs only with compiled blocks: plan with --torch-compile, or --fix tp_comm_overlap=off$" \
    "$T/err" || fail "async TP message: $(cat "$T/err")"
[ ! -e "$T/no.toml" ] || fail "refused plan left a file"
# (b) full recompute of N layers that no every-N-th block gives (30 of
# 80: 80 / 2 = 40, 80 / 3 = 26); ZeRO-0 with TP
$P -m $M70 -c $H100 --stack pytorch-fsdp2 --torch-compile \
    --fix tp=8,pp=1,zero=3,recompute=full,recompute_layers=30 --emit slurm -o "$T/no.sh" \
    > /dev/null 2> "$T/err"
[ $? -eq 3 ] && grep -q "full activation checkpointing wraps every block or every N-th (selective_ac_option N), not recompute_layers=30: plan with --fix recompute_layers=0, 26 (N 3) or 40 (N 2)$" \
    "$T/err" && [ ! -e "$T/no.sh" ] || fail "partial full recompute: $(cat "$T/err")"
# 2 of 80 is torchtitan's every 27th block (27, 54): mode selective, option "27"
$P -m $M70 -c $H100 --stack pytorch-fsdp2 --torch-compile \
    --fix tp=8,pp=1,zero=3,recompute=full,recompute_layers=2 --emit torchtitan > "$T/nth.toml" ||
    fail "every 27th block: exit $?"
toml_check "$T/nth.toml" '
assert d["activation_checkpoint"] == {"mode": "selective", "selective_ac_option": "27"}'
grep -qxF 'selective_ac_option = "27"' "$T/nth.toml" || fail "every 27th block: option"
$P -m configs/llama3-8b.json -c clusters/h200x64.yaml --stack pytorch-fsdp2 \
    --fix tp=2,pp=1,zero=0 --emit torchtitan > "$T/out" 2> "$T/err"
[ $? -eq 3 ] && grep -q 'torchtitan runs DDP (zero=0) only as the sole parallelism' "$T/err" ||
    fail "DDP with TP: $(cat "$T/err")"
# the stack's own rule is named as torchtitan's, not Megatron's
grep -q "^advice: no strategy satisfies torchtitan's rules under --fix; " "$T/err" &&
    grep -q "^Search: .* [0-9,]* refused by torchtitan's rules)" "$T/out" "$T/err" &&
    ! grep -q "Megatron's rules" "$T/out" "$T/err" || fail "DDP with TP: whose rules: $(cat "$T/err")"
# (c) kinds that do not launch the stack: usage errors before the search
$P -m $M70 -c $H100 --stack pytorch-fsdp2 --emit megatron -o "$T/no.txt" > "$T/out" 2> "$T/err"
[ $? -eq 2 ] && [ ! -e "$T/no.txt" ] && [ ! -s "$T/out" ] || fail "--emit megatron on fsdp2"
grep -q "^planner: --emit megatron: cluster 'h100x512' runs stack 'pytorch-fsdp2' (.*), which --emit megatron does not launch (it launches megatron-core, megatron-lm-2020, megatron-lm-2021, megatron-lm-2022); this stack has --emit slurm, torchrun, torchtitan$" \
    "$T/err" || fail "--emit megatron on fsdp2: $(cat "$T/err")"
$P -m $M70 -c $H100 --emit torchtitan > /dev/null 2> "$T/err"
[ $? -eq 2 ] && grep -q "which --emit torchtitan does not launch (it launches pytorch-fsdp2); this stack has --emit megatron, slurm, torchrun$" \
    "$T/err" || fail "--emit torchtitan on megatron-core: $(cat "$T/err")"
echo "torchtitan.sh: ok"
