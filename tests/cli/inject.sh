#!/bin/sh
# CLI test: names a user writes reach the emitted scripts only as quoted
# words (issue 15).  A model file, an HF config's directory, a cluster file
# and its node groups carry hostile names (newline, $(...), backticks,
# quotes, ;, #); --emit megatron|slurm|torchrun either refuses them at load
# time (exit 1, naming the control character) or writes scripts that, run
# with every external program stubbed (tests/stubs), run no command but the
# launch's own and still reach torchrun.
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
for f in configs/gpt3-175b.json configs/llama3-70b.json clusters/h100-a100-mixed.yaml; do
    [ -f "$f" ] || { echo "skip: $f absent"; exit 0; }
done
command -v bash > /dev/null 2>&1 || { echo "SKIP: no bash"; exit 0; }

# the hostile names, written with JSON's and YAML's double-quoted escapes
NAME='x\n$(pwned) #`pwned`;pwned; '"'"'\"pwned\"\r'
# replace FILE: each line that starts with one of the prefixes below is
# rewritten (read -r and printf %s: the backslashes stay as written)
replace() {
    while IFS= read -r line; do
        case $line in
            '  "name": '*) printf '  "name": "%s",\n' "$NAME" ;;
            'name: '*) printf 'name: "%s"\n' "$NAME" ;;
            '  - name: dgx-h100') printf '  - name: "h\\n$(pwned)"\n' ;;
            '  - name: dgx-a100') printf '  - name: "a;pwned #`pwned`"\n' ;;
            '  - between: [dgx-h100'*) printf '  - between: ["h\\n$(pwned)", "a;pwned #`pwned`"]\n' ;;
            *) printf '%s\n' "$line" ;;
        esac
    done < "$1"
}
replace configs/gpt3-175b.json > "$T/model.json"
replace clusters/h100-a100-mixed.yaml > "$T/mixed.yaml"
grep -q 'pwned' "$T/model.json" || fail "test setup: no hostile model name"
[ "$(grep -c 'pwned' "$T/mixed.yaml")" -eq 4 ] || fail "test setup: hostile cluster names"
# AMP's 12 V100 + 4 T4 with pp 2 over all 16 GPUs: a stage spans both groups
# (names without control characters, which would be refused at load time)
while IFS= read -r line; do
    case $line in
        '  - name: p3') printf '  - name: "p$(pwned) #`pwned`"\n' ;;
        '  - name: g4dn') printf '  - name: "g;pwned '"'"'\\"pwned\\""\n' ;;
        '  - between: '*) printf '  - between: ["p$(pwned) #`pwned`", "g;pwned '"'"'\\"pwned\\""]\n' ;;
        *) printf '%s\n' "$line" ;;
    esac
done < clusters/amp-3xp3-1xg4dn.yaml > "$T/amp.yaml"
[ "$(grep -c 'pwned' "$T/amp.yaml")" -eq 3 ] || fail "test setup: hostile AMP names"
# an HF config in a directory whose name is hostile (the report may title the
# model by it)
D="$T/m\$(pwned);\`pwned\`'
pwned"
mkdir "$D" && cp configs/llama3-70b.json "$D/config.json" || fail "test setup: $D"

# node lists for the stubbed Slurm: N names from PREFIX
nodes() { i=0; l=""; while [ $i -lt "$2" ]; do l="$l${l:+,}$1$i"; i=$((i + 1)); done; echo "$l"; }

check() {   # check LABEL MODEL CLUSTER [PLANNER ARGS...]
    label=$1 model=$2 cl=$3
    shift 3
    extra=$*
    for kind in megatron slurm torchrun; do
        out="$T/$label-$kind.sh"
        $P --model "$model" --cluster "$cl" --emit $kind $extra > "$out" 2> "$T/err"; rc=$?
        if [ $rc -eq 1 ] && grep -q 'control character' "$T/err"; then
            continue    # refused at load time
        fi
        [ $rc -eq 0 ] || fail "$label --emit $kind: exit $rc: $(cat "$T/err")"
        bash -n "$out" || fail "$label $kind: bash -n"
        if command -v shellcheck > /dev/null 2>&1 && [ $kind != megatron ]; then
            shellcheck "$out" || fail "$label $kind: shellcheck"
        fi
        # the Slurm allocation the script asks for: one node list per component
        env="" k=0
        for n in $(sed -n 's/^#SBATCH --nodes=//p' "$out"); do
            env="$env SLURM_JOB_NODELIST_HET_GROUP_$k=$(nodes "g${k}n" "$n")"
            [ $k -eq 0 ] && env="$env SLURM_NNODES=$n SLURM_JOB_NODELIST=$(nodes n "$n")"
            k=$((k + 1))
        done
        # shellcheck disable=SC2086
        tests/stubs/run.sh "$T/run-$label-$kind" "$out" $env 2> "$T/run.err"; rc=$?
        r="$T/run-$label-$kind"
        [ ! -e "$r/pwned" ] || fail "$label $kind: a name's command ran"
        if [ $kind = megatron ]; then
            # the argument list alone: its first flag is the only command
            [ "$(cat "$r/notfound")" = "--num-layers" ] ||
                fail "$label megatron: commands run: $(cat "$r/notfound")"
        else
            [ $rc -eq 0 ] || fail "$label $kind: exit $rc under the stubs: $(cat "$T/run.err")"
            [ ! -s "$r/notfound" ] || fail "$label $kind: commands run: $(cat "$r/notfound")"
            grep -q '^--num-layers$' "$r/torchrun.log" || fail "$label $kind: torchrun not reached"
        fi
    done
}

check model "$T/model.json" clusters/h100x512.yaml
check cluster configs/llama3-70b.json "$T/mixed.yaml"
check hfdir "$D/config.json" "$T/mixed.yaml"
# (the AMP clusters run deepspeed, which --emit refuses: planned as megatron-core)
check amp-mixed configs/amp-gpt2.json "$T/amp.yaml" --fix pp=2,gpus=16 --stack megatron-core
# 3 layers on the mixed T4 + V100 stage: the T4s run at their power-limited
# clock (7 while they were costed at their boost clock)
grep -q 'stage 0 (3 layers) spans T4 x4 + V100-SXM2-16GB x4' "$T/amp-mixed-slurm.sh" ||
    fail "amp-mixed slurm: no line for the stage spanning groups"
echo "inject.sh: ok"
