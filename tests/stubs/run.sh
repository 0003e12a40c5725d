#!/bin/bash
# run.sh OUT SCRIPT [NAME=VALUE]...: runs SCRIPT with bash, PATH = the stubs
# only, a clean environment with the placeholders and Slurm variables set
# (overridable by NAME=VALUE arguments); results in OUT (torchrun.log,
# notfound, pwned).  Exits with the script's status.
out=$1 script=$2
shift 2
stubs=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: > "$out/notfound"
: > "$out/torchrun.log"
exec /usr/bin/env -i PATH="$stubs" HOME="$out" BASH_ENV="$stubs/bash_env.sh" STUB_OUT="$out" \
    MEGATRON_DIR=/stub/Megatron-LM DATA_PATH=/stub/data TOKENIZER_MODEL=/stub/tokenizer \
    CHECKPOINT_DIR=/stub/ckpt NODE_RANK=0 MASTER_ADDR=node0 SLURM_NODEID=0 \
    "$@" /bin/bash "$script"
