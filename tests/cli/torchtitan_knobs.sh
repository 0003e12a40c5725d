#!/bin/sh
# The pytorch-fsdp2 stack's knob set is what torchtitan runs (issue 12;
# inputs/stack.c stack_spec.rules, the same rules --emit torchtitan refuses
# by): the best plan of every shipped model on the shipped clusters, with
# and without --torch-compile, emits a torchtitan job config, unless the
# model itself is one torchtitan v0.2.2 cannot train (fp16 configs, MTP
# layers), or no plan fits (exit 3).  Before the rules, 85 of 130 best plans
# were refused for their knobs (DDP with tp/pp/cp, async TP without
# compile, full recompute of the first N layers, Megatron's recompute
# modules in MoE layers).
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
n=0
for c in h100x512 gb200x576 h200x64 h100-a100-mixed; do
    for m in configs/*.json; do
        for compile in "" --torch-compile; do
            $P -m "$m" -c "clusters/$c.yaml" --stack pytorch-fsdp2 $compile \
                --emit torchtitan -o "$T/job.toml" > /dev/null 2> "$T/err"
            rc=$?
            case $rc in
            0) [ -s "$T/job.toml" ] || fail "$m $c $compile: no config"; n=$((n + 1)) ;;
            3) ;;
            1) grep -q "torchtitan trains in bf16 or fp32\|has no multi-token prediction" \
                   "$T/err" || fail "$m $c $compile refused: $(cat "$T/err")" ;;
            *) fail "$m $c $compile: exit $rc: $(cat "$T/err")" ;;
            esac
            rm -f "$T/job.toml"
        done
    done
done
# most of the 104 cases emit (a test that cannot pass vacuously)
[ "$n" -ge 60 ] || fail "only $n configs emitted"
echo "torchtitan_knobs: $n best plans emitted"
