#!/bin/sh
# CLI tests of -j N / --jobs N (base/workers.h): the output of a search
# (plan, size), validate and sweep is byte for byte the same at -j 1 and
# -j 4 (and at the default), but for the search's time and candidates per
# second; a bad N is a usage error (exit 2).
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# plan: every shipped model on a small cluster; the two largest MoE searches
# on 512 H100 (table and JSON); the goodput objective; a pinned layout; node
# groups of different GPUs (placements across them, their ILP re-partition);
# a search stopped by its work limit; nothing fits (the advice searches more
# nodes).  Each at -j 1 and -j 4: the same stdout, stderr and exit status.
untimed() {   # the search's seconds and candidates/s, in the table and JSON
    sed -e 's/, [0-9.]* s, [0-9,]* candidates\/s$//' \
        -e 's/"seconds": [^,]*,/"seconds": T,/' -e 's/"candidates_per_s": [^,]*,/"cps": T,/' "$1"
}
same_at_j() {   # ARGS...: planner ARGS at -j 1 and -j 4 agree
    $P "$@" -j 1 > "$T/p1" 2> "$T/e1"
    r1=$?
    $P "$@" --jobs 4 > "$T/p4" 2> "$T/e4"
    r4=$?
    [ $r1 -eq $r4 ] || fail "'$*': exit $r1 at -j 1, $r4 at -j 4"
    [ $r1 -eq 0 ] || [ $r1 -eq 3 ] || fail "'$*': exit $r1: $(cat "$T/e1")"
    untimed "$T/p1" > "$T/u1"
    untimed "$T/p4" > "$T/u4"
    cmp -s "$T/u1" "$T/u4" || fail "'$*': -j 1 and -j 4 differ: $(diff "$T/u1" "$T/u4" | head -5)"
    untimed "$T/e1" > "$T/u1"
    untimed "$T/e4" > "$T/u4"
    cmp -s "$T/u1" "$T/u4" || fail "'$*': stderr at -j 1 and -j 4 differ"
}
for m in configs/*.json; do
    same_at_j -m "$m" -c h200x64 --top 5
done
same_at_j -m deepseek-v3 -c h100x512
grep -q '^    1 ' "$T/p1" || fail "DeepSeek-V3 on h100x512: no plan ranked 1"
same_at_j -m qwen3-235b-a22b -c h100x512 --format json
grep -q '"strategies": \[' "$T/p1" || fail "Qwen3-235B JSON has no strategies"
same_at_j -m llama3-70b -c h100x512 --objective goodput --top 20
same_at_j -m gpt3-175b -c a100x1024 --fix tp=8,pp=8 --format json
same_at_j -m llama3-70b -c h100-a100-mixed --top 5
grep -q 'best across groups' "$T/p1" || fail "h100-a100-mixed: no placement note"
same_at_j -m gpt2-xl -c mixed3x1024 --top 5 --format json
same_at_j -m amp-gpt2 -c amp-3xp3-1xg4dn --partition ilp
same_at_j -m qwen3-30b-a3b -c h100x512 --search-limit 3e8
grep -q 'stopped at its work limit' "$T/p1" || fail "--search-limit 3e8 did not stop the search"
same_at_j -m llama3.1-405b -c h200x64 --fix gpus=8
[ $r1 -eq 3 ] && grep -q 'advice: 8 nodes' "$T/e1" || fail "405B on 8 GPUs: exit $r1, $(cat "$T/e1")"
same_at_j size -m llama3-70b -c h100x512 --tokens 1e12 --deadline 30d

# validate: one prediction per run, the sums in run order
R=tests/data/memory-runs.json
[ -f "$R" ] || { echo "SKIP jobs.sh: $R absent"; exit 77; }
for f in json table; do
    $P validate "$R" --format $f -j 1 > "$T/v1.$f" || fail "validate -j 1 exit $?"
    $P validate "$R" --format $f --jobs 4 > "$T/v4.$f" || fail "validate -j 4 exit $?"
    $P validate "$R" --format $f > "$T/vd.$f" || fail "validate exit $?"
    cmp -s "$T/v1.$f" "$T/v4.$f" || fail "validate --format $f: -j 1 and -j 4 differ"
    cmp -s "$T/v1.$f" "$T/vd.$f" || fail "validate --format $f: -j 1 and the default differ"
done
grep -q '"runs"' "$T/v1.json" || fail "validate JSON has no runs"

# sweep: 2 models x 2 clusters x 3 node counts x 2 batches = 24 points, more
# than 4 threads hold at once; JSON Lines and CSV
A="-m llama3-8b,mixtral-8x7b -c h100x512,a100x1024 --nodes 2,4,8 --gbs 256,512"
for f in csv jsonl; do
    $P sweep $A --format $f -j 1 > "$T/s1.$f" || fail "sweep -j 1 exit $?"
    $P sweep $A --format $f -j 4 > "$T/s4.$f" || fail "sweep -j 4 exit $?"
    cmp -s "$T/s1.$f" "$T/s4.$f" || fail "sweep --format $f: -j 1 and -j 4 differ"
done
[ "$(grep -c ',ok,' "$T/s1.csv")" -eq 24 ] || fail "sweep: expected 24 ok points"
$P sweep $A --shard 1/3 -j 3 > "$T/sh.csv" || fail "sweep --shard -j 3 exit $?"
[ "$(tail -n +2 "$T/sh.csv" | cut -d, -f1 | tr '\n' ' ')" = "1 4 7 10 13 16 19 22 " ] ||
    fail "sweep --shard 1/3 -j 3: points $(tail -n +2 "$T/sh.csv" | cut -d, -f1 | tr '\n' ' ')"

# a bad N: exit 2 with the message, for every command that takes it
for cmd in "validate $R" "sweep $A" "size -m llama3-8b -c h100x512" \
           "-m llama3-8b -c h100x512"; do
    for n in 0 -1 x 1025; do
        $P $cmd -j "$n" > /dev/null 2> "$T/err"
        rc=$?
        [ $rc -eq 2 ] || fail "'$cmd -j $n': exit $rc, expected 2"
        grep -q "jobs: expected a number of threads in 1..1024, got '$n'" "$T/err" ||
            fail "'$cmd -j $n': $(cat "$T/err")"
    done
done
echo "jobs.sh: ok"
