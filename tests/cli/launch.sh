#!/bin/sh
# CLI tests of the launch material: --emit megatron|slurm|torchrun, --trace,
# --svg on a real plan; scripts pass bash -n and shellcheck (when installed);
# every Megatron flag exists in the --megatron-version release's list
# (tests/data/megatron-flags/, a superset of ../shared's core_v0.15.0 list); the
# trace is Chrome trace JSON whose step matches the plan's predicted step; the
# SVG parses as XML; failed writes are exit 4 and leave no partial file; the
# man page renders and documents every long option of every command's --help;
# heterogeneous plans map pipeline stages to their node groups' node ranks;
# emit refuses the kinds that do not launch the stack.
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

M=configs/llama3-70b.json
C=clusters/h100x512.yaml
for f in "$M" "$C"; do [ -f "$f" ] || { echo "SKIP launch.sh: $f absent"; exit 77; }; done
FLAGS=tests/data/megatron-flags
SHARED_FLAGS=${PLANNER_SHARED:-../shared}/reference/megatron-flags-core_v0.15.0.txt
if [ -f "$SHARED_FLAGS" ]; then
    # the repository's core_v0.15.0 list holds every flag of the shared one
    missing=$(grep -v '^#' "$SHARED_FLAGS" | sort -u | comm -23 - "$FLAGS/core_v0.15.0.txt")
    [ -z "$missing" ] || fail "flags of $SHARED_FLAGS missing from $FLAGS: $missing"
else
    echo "SKIP launch.sh shared flag list within core_v0.15.0.txt: $SHARED_FLAGS absent"
fi

# check_flags FILE KIND TAG: every flag of the Megatron argument list
# (line-leading --words; scripts: inside MEGATRON_ARGS=( ... )) is in TAG's list
check_flags() {
    if [ "$2" = megatron ]; then
        grep -o '^--[a-z0-9-]*' "$1" > "$T/flags"
    else
        sed -n '/^MEGATRON_ARGS=(/,/^)/p' "$1" | grep -o '^ *--[a-z0-9-]*' | tr -d ' ' > "$T/flags"
    fi
    [ -s "$T/flags" ] || fail "$1: no flags found"
    grep -q "^# .*Megatron-LM $3" "$1" || fail "$1: the header does not name $3"
    while read -r flag; do
        grep -qx -- "$flag" "$FLAGS/$3.txt" || fail "$1: $flag is not a $3 flag"
    done < "$T/flags"
}

for kind in megatron slurm torchrun; do
    $P --model "$M" --cluster "$C" --emit $kind > "$T/$kind.sh" || fail "--emit $kind exit $?"
    bash -n "$T/$kind.sh" || fail "$kind: bash -n"
    check_flags "$T/$kind.sh" $kind core_v0.19.0    # the default: the newest
done
# every shipped model, for the oldest and the newest release; two models for
# all five
for m in configs/*.json; do
    case $m in
        */llama3-70b.json|*/deepseek-v3.json) versions="0.15 0.16 0.17 0.18 0.19" ;;
        */uneven-gpt-13b.json) continue ;;   # refused: below
        */gpt-oss-120b.json)   # alternating sliding windows: no Megatron flag
            $P --model "$m" --cluster "$C" --emit megatron > /dev/null 2> "$T/err"
            [ $? -eq 1 ] || fail "$m: emit should refuse the sliding windows"
            grep -q 'the Megatron flags do not carry its sliding-window or chunked attention' \
                "$T/err" || fail "$m: $(cat "$T/err")"
            continue ;;
        */pythia-12b.json)   # GPT-NeoX's parallel attention+MLP block: no Megatron flag
            $P --model "$m" --cluster "$C" --emit megatron > /dev/null 2> "$T/err"
            [ $? -eq 1 ] || fail "$m: emit should refuse the parallel block"
            grep -q 'the Megatron flags do not carry its parallel attention+MLP block' \
                "$T/err" || fail "$m: $(cat "$T/err")"
            continue ;;
        *) versions="0.15 0.19" ;;
    esac
    for v in $versions; do
        $P --model "$m" --cluster "$C" --emit megatron --megatron-version $v > "$T/v.txt" ||
            fail "$m --megatron-version $v: exit $?"
        check_flags "$T/v.txt" megatron "core_v$v.0"
    done
done
# the architecture reaches the flags (hand-read from each config.json) or emit
# refuses: RoPE bases, Llama 3.1's scaling, DeepSeek-V3's YaRN on MLA
for want in "llama3-70b --rotary-base 500000" "mixtral-8x7b --rotary-base 1000000" \
            "llama3.1-405b --rope-scaling-factor 8" "deepseek-v3 --rope-type yarn" \
            "deepseek-v3 --rotary-scaling-factor 40" "deepseek-v3 --mscale-all-dim 1"; do
    set -- $want
    [ -f "configs/$1.json" ] || continue
    $P --model "configs/$1.json" --cluster "$C" --emit megatron > "$T/a.txt" || fail "$1: exit $?"
    grep -qx -- "$2 $3 \\\\" "$T/a.txt" || fail "$1: no '$2 $3'"
done
if [ -f configs/uneven-gpt-13b.json ]; then
    $P --model configs/uneven-gpt-13b.json --cluster "$C" --emit slurm -o "$T/u.sh" 2> "$T/err"
    rc=$?
    [ $rc -eq 1 ] || fail "uneven-gpt-13b emit: exit $rc, expected 1 (refused)"
    [ ! -e "$T/u.sh" ] || fail "uneven-gpt-13b: a refused emit wrote its file"
    grep -q "layers 0-3 have an MLP width of 81920 (the model's: 20480), layers 36-39 have 80 heads of 64" \
        "$T/err" || fail "uneven-gpt-13b: $(cat "$T/err")"
fi
$P --model "$M" --cluster "$C" --emit megatron --megatron-version 0.14 > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "--megatron-version 0.14: exit $rc, expected 2"
grep -q "expected 0.15, 0.16, 0.17, 0.18 or 0.19, got '0.14'" "$T/err" ||
    fail "--megatron-version 0.14: $(cat "$T/err")"
if command -v shellcheck > /dev/null 2>&1; then
    shellcheck "$T/slurm.sh" || fail "slurm script: shellcheck"
    shellcheck "$T/torchrun.sh" || fail "torchrun script: shellcheck"
else
    echo "SKIP launch.sh shellcheck on the scripts: shellcheck not installed"
fi
grep -q '^#SBATCH --ntasks-per-node=1$' "$T/slurm.sh" || fail "slurm: ntasks-per-node"
grep -q '^#SBATCH --gpus-per-node=8$' "$T/slurm.sh" || fail "slurm: gpus-per-node"
grep -q '^#SBATCH --exclusive$' "$T/slurm.sh" || fail "slurm: exclusive"
grep -q 'scontrol show hostnames' "$T/slurm.sh" || fail "slurm: MASTER_ADDR"
grep -q -- '--node_rank="$SLURM_NODEID"' "$T/slurm.sh" || fail "slurm: node rank"
grep -q -- '--num-layers 80' "$T/megatron.sh" || fail "megatron: --num-layers 80"
grep -q -- '--num-query-groups 8' "$T/megatron.sh" || fail "megatron: GQA groups"
# the sbatch node count is the plan's GPUs over 8 per node
python3 - "$T/slurm.sh" <<'PY' || fail "slurm: node count"
import re, sys
t = open(sys.argv[1]).read()
nodes = int(re.search(r"^#SBATCH --nodes=(\d+)$", t, re.M).group(1))
plan = re.search(r"^# plan: tp=(\d+) pp=(\d+) dp=(\d+) cp=(\d+)", t, re.M)
tp, pp, dp, cp = map(int, plan.groups())
assert nodes * 8 == tp * pp * dp * cp, (nodes, plan.groups())
PY

# heterogeneous plan (32 DGX A100 + 32 DGX H100): one hetjob component per run
# of stages, in stage order; the node ranks each component's srun task accepts
# and the torchrun ranges must give every stage's global ranks
# [i tp cp dp, (i+1) tp cp dp) to nodes of the stage's GPU (from --format json)
MC=clusters/h100-a100-mixed.yaml
if [ -f "$MC" ]; then
    $P --model "$M" --cluster "$MC" --format json > "$T/mixed.json" || fail "mixed json exit $?"
    for kind in slurm torchrun; do
        $P --model "$M" --cluster "$MC" --emit $kind > "$T/mixed-$kind.sh" ||
            fail "mixed --emit $kind exit $?"
        bash -n "$T/mixed-$kind.sh" || fail "mixed $kind: bash -n"
        if command -v shellcheck > /dev/null 2>&1; then
            shellcheck "$T/mixed-$kind.sh" || fail "mixed $kind: shellcheck"
        else
            echo "SKIP launch.sh shellcheck on the scripts: shellcheck not installed"
        fi
    done
    python3 - "$T/mixed.json" "$T/mixed-slurm.sh" "$T/mixed-torchrun.sh" <<'PY' || fail "mixed: stage map"
import json, re, sys
best = json.load(open(sys.argv[1]))["strategies"][0]
slurm = open(sys.argv[2]).read()
torch = open(sys.argv[3]).read()
stages = best["stages"]
per_stage = best["tp"] * best["cp"] * best["dp"]
assert len({s["tp"] for s in stages}) == 1
assert len({s["gpu"] for s in stages}) > 1, "the mixed plan uses one GPU type"
# sbatch components, split at "#SBATCH hetjob"
head = slurm.split("\nset -euo pipefail")[0]
comps = head.split("#SBATCH hetjob\n")
nodes = [int(re.search(r"^#SBATCH --nodes=(\d+)$", c, re.M).group(1)) for c in comps]
gpn = [int(re.search(r"^#SBATCH --gpus-per-node=(\d+)$", c, re.M).group(1)) for c in comps]
gpus = [re.search(r"^#SBATCH --constraint=PLACEHOLDER-feature-(\S+)$", c, re.M).group(1)
        for c in comps]
# srun parts: "--het-group=K ... launch LO HI NPROC"
parts = re.findall(r"--het-group=(\d+) --ntasks-per-node=1 bash -c \"\$LAUNCH\" launch (\d+) (\d+) (\d+)",
                   slurm)
assert [int(p[0]) for p in parts] == list(range(len(comps))), parts
# torchrun: NODE_RANK ranges and NPROC, in order
tr = re.findall(r'\[ "\$NODE_RANK" -ge (\d+) \] && \[ "\$NODE_RANK" -le (\d+) \]; then\n    NPROC=(\d+)',
                torch)
assert len(tr) == len(comps), tr
node_gpu = []   # per node rank: (GPU, processes)
nxt = 0
for k, (n, g, gpu, p, t) in enumerate(zip(nodes, gpn, gpus, parts, tr)):
    lo, hi, nproc = int(p[1]), int(p[2]), int(p[3])
    assert (lo, hi, nproc) == (nxt, nxt + n - 1, g), (k, p, n, g)
    assert tuple(map(int, t)) == (lo, hi, nproc), (k, t)
    node_gpu += [(gpu, g)] * n
    nxt += n
assert int(re.search(r"^NNODES=(\d+)$", slurm, re.M).group(1)) == nxt
assert re.search(r"--nnodes=%d " % nxt, torch)
# global ranks per node (torchrun: prefix sums of processes per node)
rank_gpu = [gpu for gpu, g in node_gpu for _ in range(g)]
assert len(rank_gpu) == per_stage * best["pp"] == best["gpus"], (len(rank_gpu), best["gpus"])
for i, s in enumerate(stages):
    held = set(rank_gpu[i * per_stage:(i + 1) * per_stage])
    assert held == {s["gpu"]}, (i, s["gpu"], held)
# the header names every group's GPU
m = re.search(r"^# model \S+ on \S+ \((.*)\)$", slurm, re.M)
assert set(m.group(1).split(" + ")) == {s["gpu"] for s in stages}, m.group(1)
PY
else
    echo "SKIP launch.sh heterogeneous launch: $MC absent"
fi

# docs/json-schema.md names every key of real documents: the mixed-cluster
# plan above (placement_note, stages on two GPUs) and a run where nothing fits
# (closest_miss, reason, advice; exit 3)
if [ -f "$MC" ] && [ -f docs/json-schema.md ] && [ -f configs/llama3.1-405b.json ] &&
   [ -f clusters/amp-4xg4dn.yaml ]; then
    $P --model configs/llama3.1-405b.json --cluster clusters/amp-4xg4dn.yaml --format json \
        > "$T/miss.json" 2> /dev/null; rc=$?
    [ $rc -eq 3 ] || fail "405B on 16 T4: exit $rc, expected 3"
    python3 - docs/json-schema.md "$T/mixed.json" "$T/miss.json" <<'PY' || fail "json-schema.md incomplete"
import json, sys
doc = open(sys.argv[1]).read()
def keys(o, path, out):
    if isinstance(o, dict):
        for k, v in o.items():
            out.add((k, path + "." + k))
            keys(v, path + "." + k, out)
    elif isinstance(o, list):
        for v in o:
            keys(v, path + "[]", out)
found = set()
for f in sys.argv[2:]:
    keys(json.load(open(f)), "", found)
names = {k for k, _ in found}
for need in ("placement_note", "stages", "closest_miss", "advice", "reason"):
    assert need in names, "the documents lack " + need
missing = sorted(p for k, p in found if '"%s"' % k not in doc and "`%s`" % k not in doc)
assert not missing, missing
PY
else
    echo "SKIP launch.sh json-schema.md completeness: a shipped file absent"
fi

# trace and SVG of the best plan
$P --model "$M" --cluster "$C" --format json --trace "$T/t.json" --svg "$T/t.svg" > "$T/plan.json" ||
    fail "trace/svg exit $?"
python3 - "$T/t.json" "$T/plan.json" "$T/t.svg" <<'PY' || fail "trace/svg content"
import json, sys, xml.etree.ElementTree as E
tr = json.load(open(sys.argv[1]))
best = json.load(open(sys.argv[2]))["strategies"][0]
ev = [e for e in tr["traceEvents"] if e["ph"] == "X"]
f = [e for e in ev if e["cat"] == "forward"]
b = [e for e in ev if e["cat"] == "backward"]
mb = best["gbs"] // (best["mbs"] * best["dp"])
assert len(f) == len(b) == best["pp"] * best["vpp"] * mb, (len(f), best)
end_us = max(e["ts"] + e["dur"] for e in ev)
assert abs(end_us / 1e6 - best["step_time_s"]) <= 1e-3 * best["step_time_s"], (end_us, best)
names = [e for e in tr["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
assert len(names) == best["pp"]
root = E.parse(sys.argv[3]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg"
PY

# a ZeRO-2 plan: its per-micro-batch reduce-scatters are inside the backwards
# the trace replays, so the trace still ends at the predicted step (it added
# them again after the pipeline, 0.38 s past a 7.50 s step, until 2026-11)
$P --model "$M" --cluster "$C" --fix zero=2 --top 1 --format json --trace "$T/z2.json" \
    > "$T/z2-plan.json" || fail "zero 2 trace exit $?"
python3 - "$T/z2.json" "$T/z2-plan.json" <<'PY' || fail "zero 2 trace ends at the step"
import json, sys
tr = json.load(open(sys.argv[1]))
best = json.load(open(sys.argv[2]))["strategies"][0]
assert best["zero"] == 2 and best["dp"] > 1 and best["time"]["dp_comm_s"] > 0, best
ev = [e for e in tr["traceEvents"] if e["ph"] == "X"]
end_us = max(e["ts"] + e["dur"] for e in ev)
assert abs(end_us / 1e6 - best["step_time_s"]) <= 1e-6 * best["step_time_s"], (end_us, best)
PY

# an interleaved plan over uneven chunks (Megatron's account-for-embedding/loss
# split: rank 0's first and rank 7's last chunk hold 1 layer, the others 2):
# the trace replays evaluate()'s per-chunk schedule, so it ends at the
# predicted step, and the stage map lists each rank's chunks
if [ -f configs/llama3.1-405b.json ] && [ -f clusters/h100x16384.yaml ]; then
    $P --model configs/llama3.1-405b.json --cluster clusters/h100x16384.yaml --gbs 2048 \
        --seq 8192 --fix tp=8,pp=8,vpp=8,mbs=1 --top 1 --format json --trace "$T/c.json" \
        > "$T/c-plan.json" || fail "405B vpp 8 trace exit $?"
    python3 - "$T/c.json" "$T/c-plan.json" <<'PY' || fail "405B vpp 8 trace content"
import json, sys
tr = json.load(open(sys.argv[1]))
best = json.load(open(sys.argv[2]))["strategies"][0]
ev = [e for e in tr["traceEvents"] if e["ph"] == "X"]
end_us = max(e["ts"] + e["dur"] for e in ev)
assert abs(end_us / 1e6 - best["step_time_s"]) <= 1e-6 * best["step_time_s"], (end_us, best)
assert abs(tr["otherData"]["simulated_step_s"] - best["step_time_s"]) <= 1e-9 * best["step_time_s"]
ch = best["stages"][0]["chunks"]
assert [(c["first_layer"], c["layers"]) for c in ch[:3]] == [(0, 1), (15, 2), (31, 2)], ch
PY
    $P --model configs/llama3.1-405b.json --cluster clusters/h100x16384.yaml --gbs 2048 \
        --seq 8192 --fix tp=8,pp=8,vpp=8,mbs=1 --top 1 > "$T/c.txt" || fail "405B vpp 8 exit $?"
    grep -q "layers 0 | 15-16 | 31-32 | 47-48" "$T/c.txt" || fail "405B stage map chunks"
else
    echo "SKIP launch.sh 405B interleaved trace: a shipped config or cluster absent"
fi

# write errors: exit 4, and no partial or temporary file left behind
if [ -c /dev/full ] && [ -w /dev/full ]; then
    $P --model "$M" --cluster "$C" --emit slurm > /dev/full 2> "$T/err"; rc=$?
    [ $rc -eq 4 ] || fail "--emit to /dev/full: exit $rc"
else
    echo "SKIP launch.sh write error on stdout: /dev/full is not a writable character device"
fi
$P --model "$M" --cluster "$C" --trace "$T/none/t.json" > /dev/null 2>&1; rc=$?
[ $rc -eq 4 ] || fail "--trace into a missing directory: exit $rc"
# emit only the kinds that launch the stack (out/emit.h emit_kind_supported):
# Megatron-LM's arguments on the Megatron-LM stacks, torchtitan's config on
# pytorch-fsdp2 (tests/cli/torchtitan.sh), DeepSpeed's on deepspeed
# (tests/cli/deepspeed.sh), the scripts on all: a usage error
# naming the stack, the stacks the kind launches and the kinds the stack has,
# before the search, no file
for st in pytorch-fsdp2:megatron deepspeed:megatron; do
    kind=${st#*:} st=${st%:*}
    $P --model "$M" --cluster "$C" --stack $st --emit $kind -o "$T/refused.sh" > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] || fail "--emit $kind on $st: exit $rc, expected 2"
    case $st in
        deepspeed) has="this stack has --emit slurm, torchrun, deepspeed" ;;
        *) has="this stack has --emit slurm, torchrun, torchtitan" ;;
    esac
    launches="megatron-core, megatron-lm-2020, megatron-lm-2021, megatron-lm-2022"
    grep -q "^planner: --emit $kind: cluster 'h100x512' runs stack '$st' (.*), which --emit $kind does not launch (it launches $launches); $has$" "$T/err" \
        || fail "--emit $kind on $st: message: $(cat "$T/err")"
    [ ! -e "$T/refused.sh" ] && [ ! -s "$T/out" ] || fail "--emit $kind on $st wrote output"
done
$P --model "$M" --cluster clusters/amp-4xg4dn.yaml --emit megatron > /dev/null 2>&1
[ $? -eq 2 ] || fail "--emit on the deepspeed cluster amp-4xg4dn: not refused"
# the Megatron-LM stacks still emit, megatron-core byte-identical to the
# cluster's own (megatron-core) stack
for kind in megatron slurm torchrun; do
    $P --model "$M" --cluster "$C" --stack megatron-core --emit $kind > "$T/core-$kind.sh" ||
        fail "--stack megatron-core --emit $kind exit $?"
    cmp -s "$T/core-$kind.sh" "$T/$kind.sh" || fail "--stack megatron-core --emit $kind differs"
done
for st in megatron-lm-2020 megatron-lm-2021 megatron-lm-2022; do
    $P --model "$M" --cluster "$C" --stack $st --emit megatron > "$T/$st.txt" ||
        fail "--stack $st --emit megatron exit $?"
    check_flags "$T/$st.txt" megatron core_v0.19.0
done
$P --model "$M" --cluster "$C" --emit torchrun -o "$T/run.sh" > /dev/null || fail "-o exit"
[ -s "$T/run.sh" ] || fail "-o wrote nothing"
ls "$T" | grep -q '\.tmp\.' && fail "temporary file left behind"

# the man page renders
if [ -f planner.1 ]; then
    if command -v groff > /dev/null 2>&1; then
        groff -man -Tutf8 -ww -P-cbou planner.1 > "$T/man.txt" 2> "$T/man.err" || fail "groff failed"
        [ ! -s "$T/man.err" ] || fail "groff warnings: $(cat "$T/man.err")"
        for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES EXAMPLES; do
            grep -q "^$s" "$T/man.txt" || fail "man page section $s"
        done
    elif command -v mandoc > /dev/null 2>&1; then
        mandoc -Tlint planner.1 || fail "mandoc lint"
    else
        echo "SKIP launch.sh man page renders: neither groff nor mandoc installed"
    fi
else
    echo "SKIP launch.sh man page renders: planner.1 absent"
fi
# every long option of every command's --help is documented in the man page,
# in that command's section (an option is the first --word of a help line
# that starts with it, after an optional short form)
if [ -f planner.1 ]; then
    sed 's/\\-/-/g' planner.1 > "$T/man.src"
    for cmd in plan validate size sweep calibrate crossval; do
        # (the exit status of --help is not checked here: the options are)
        case $cmd in
            plan) sec='Planning (the default command)'; $P --help > "$T/help" ;;
            *) sec="planner $cmd"; $P $cmd --help > "$T/help" ;;
        esac
        # the man page section of the command: from its .SS line to the next .SS/.SH
        awk -v s="$sec" 'index($0, ".SS \"" s) == 1 { on = 1; next }
                         on && /^\.S[SH] / { exit } on' "$T/man.src" > "$T/sec"
        [ -s "$T/sec" ] || fail "man page: no section for $cmd ($sec)"
        sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' "$T/help" | sort -u > "$T/opts"
        [ -s "$T/opts" ] || fail "planner $cmd --help: no options found"
        while read -r opt; do
            grep -q -- "$opt\([^a-z0-9-]\|$\)" "$T/sec" ||
                fail "man page: $opt of 'planner $cmd --help' is not in section '$sec'"
        done < "$T/opts"
    done
else
    echo "SKIP launch.sh --help options in planner.1: planner.1 absent"
fi
echo "launch.sh: ok"
