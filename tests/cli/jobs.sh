#!/bin/sh
# CLI tests of -j N / --jobs N (base/workers.h): the output of validate and
# sweep is byte for byte the same at -j 1 and -j 4 (and at the default);
# a bad N is a usage error (exit 2).
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

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
for cmd in "validate $R" "sweep $A"; do
    for n in 0 -1 x 1025; do
        $P $cmd -j "$n" > /dev/null 2> "$T/err"
        rc=$?
        [ $rc -eq 2 ] || fail "'$cmd -j $n': exit $rc, expected 2"
        grep -q "jobs: expected a number of threads in 1..1024, got '$n'" "$T/err" ||
            fail "'$cmd -j $n': $(cat "$T/err")"
    done
done
echo "jobs.sh: ok"
