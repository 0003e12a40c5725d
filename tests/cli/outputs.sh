#!/bin/sh
# Outputs (issues 15 and 16): a run writes all of its outputs or none; no two
# outputs, and no output and input, are the same file (device and inode);
# devices, FIFOs, symlinks and stdout are written in place, never replaced;
# every write is checked (a full disk or /dev/full is exit 4 with the path,
# and no partial file); a failed write of stdout is an error even for
# --help/--version; with stderr closed the exit code is the error's own.
set -u
P=${PLANNER:-./planner}
M=configs/gpt3-175b.json
C=clusters/h100x512.yaml
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Every output below is inside $T, or a private device node: a build with
# the old bugs (renaming over a device) damages nothing else.
fail=0
# FULL: a device that fails every write.  As root, a private node (a buggy
# build renaming over it then harms nothing outside $T); else /dev/full, which
# a user cannot replace.
FULL=/dev/full
if [ "$(id -u)" -eq 0 ] && mknod "$T/full" c 1 7 2> /dev/null; then FULL=$T/full; fi
no() { echo "FAIL: $*"; fail=1; }
# leftovers DIR: no temporary file left behind
leftovers() { ls -a "$1" | grep -q '\.tmp\.' && no "temporary file left in $1: $(ls -a "$1")"; }

# 1. all or nothing: the report is not written when the trace cannot be
$P --model $M --cluster $C -o "$T/r.txt" --trace "$T/missing/t.json" 2> "$T/err"
rc=$?
[ $rc -eq 4 ] || no "trace in a missing directory: exit $rc"
[ -e "$T/r.txt" ] && no "-o written although --trace failed"
grep -q "^planner: $T/missing/t.json: --trace: cannot create: No such file or directory" "$T/err" \
    || no "missing directory message: $(cat "$T/err")"
$P --model $M --cluster $C -o "$T/r.txt" --svg "$T/s.svg" --trace "$FULL" 2> "$T/err"
rc=$?
[ $rc -eq 4 ] || no "trace to /dev/full: exit $rc"
[ -e "$T/r.txt" ] || [ -e "$T/s.svg" ] && no "outputs written although --trace /dev/full failed"
grep -q "^planner: $FULL: write error: No space left on device" "$T/err" || no "full device: $(cat "$T/err")"
# ... and stdout too holds back: the report is not printed when a file fails
$P --model $M --cluster $C --trace "$FULL" > "$T/out" 2> /dev/null
[ -s "$T/out" ] && no "report printed although --trace failed"
leftovers "$T"

# 2. no output over an input: the same file by device and inode, under any name
cp $M "$T/m.json"
ln "$T/m.json" "$T/hard.json"
ln -s m.json "$T/soft.json"
for o in "$T/m.json" "$T/hard.json" "$T/soft.json" "$T/../$(basename "$T")/m.json"; do
    $P --model "$T/m.json" --cluster $C -o "$o" > /dev/null 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] || no "-o $o over the model: exit $rc"
    grep -q -- "-o names the same file as --model" "$T/err" || no "-o over the model: $(cat "$T/err")"
done
cmp -s $M "$T/m.json" || no "the model file was changed"
cp $C "$T/c.yaml"
$P --model $M --cluster "$T/c.yaml" --trace "$T/c.yaml" > /dev/null 2> "$T/err"
[ $? -eq 2 ] || no "--trace over the cluster: not exit 2"
cmp -s $C "$T/c.yaml" || no "the cluster file was changed"

# 3. two outputs, one file
$P --model $M --cluster $C -o "$T/x" --trace "$T/x" 2> "$T/err"
[ $? -eq 2 ] || no "-o F --trace F: not exit 2"
grep -q -- "--trace names the same file as -o" "$T/err" || no "-o F --trace F: $(cat "$T/err")"
$P --model $M --cluster $C --svg "$T/y" --trace "./$T/../$(basename "$T")/y" > /dev/null 2> "$T/err"
case "$T" in /*) $P --model $M --cluster $C --svg "$T/y" --trace "$T/./y" > /dev/null 2> "$T/err";; esac
[ $? -eq 2 ] || no "--svg F --trace ./F: not exit 2"
$P --model $M --cluster $C --trace - > /dev/null 2> "$T/err"
[ $? -eq 2 ] || no "--trace - with the report on stdout: not exit 2"
$P --model $M --cluster $C --trace /proc/self/fd/1 > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || no "--trace /proc/self/fd/1 with the report on stdout: not exit 2"
[ -e "$T/x" ] || [ -e "$T/y" ] && no "a refused run wrote a file"

# 4. special files: written in place, never replaced
mkfifo "$T/fifo"
timeout 20 cat "$T/fifo" > "$T/from-fifo" &   # bounded: a replaced FIFO has no writer
reader=$!
$P --model $M --cluster $C --top 2 -o "$T/fifo" || no "-o FIFO: exit $?"
wait $reader
[ -p "$T/fifo" ] || no "-o FIFO replaced the FIFO"
grep -q '^Best plan: ' "$T/from-fifo" || no "-o FIFO: the reader got no report"
echo old > "$T/real.txt"
ln -s real.txt "$T/link.txt"
$P --model $M --cluster $C --top 2 -o "$T/link.txt" || no "-o symlink: exit $?"
[ -L "$T/link.txt" ] || no "-o symlink replaced the link"
grep -q '^Best plan: ' "$T/real.txt" || no "-o symlink: the target has no report"
ln -s /proc/self/fd/1 "$T/stdout-link"
$P --model $M --cluster $C -o "$T/r2.txt" --trace "$T/stdout-link" > "$T/t.json" || no "--trace link-to-stdout: exit $?"
[ -L "$T/stdout-link" ] || no "--trace link-to-stdout replaced the link"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))["traceEvents"]' "$T/t.json" \
    || no "--trace link-to-stdout: stdout is no trace"
if [ "$(id -u)" -eq 0 ] && mknod "$T/null" c 1 3 2> /dev/null; then
    $P --model $M --cluster $C -o "$T/null" || no "-o device: exit $?"
    [ -c "$T/null" ] || no "-o device replaced the device node"
else
    echo "SKIP: -o on a device node (needs root for mknod)"
fi
$P --model $M --cluster $C -o "$FULL" 2> "$T/err"
[ $? -eq 4 ] || no "-o full device: not exit 4"
grep -q "^planner: $FULL: write error: No space left on device" "$T/err" || no "-o full device: $(cat "$T/err")"
[ -c "$FULL" ] || no "-o full device replaced the device node"
leftovers "$T"

# 5. stdout: a failed write is exit 4, also for --help and --version
$P --model $M --cluster $C --format json > /dev/full 2> "$T/err"
[ $? -eq 4 ] || no "--format json > /dev/full: not exit 4"
grep -q "^planner: standard output: write error: No space left on device" "$T/err" \
    || no "json > /dev/full: $(cat "$T/err")"
for cmd in "" validate sweep calibrate crossval; do
    $P $cmd --help > /dev/full 2> /dev/null
    [ $? -eq 4 ] || no "planner $cmd --help > /dev/full: not exit 4"
    $P $cmd --help >&- 2> /dev/null
    [ $? -eq 4 ] || no "planner $cmd --help, stdout closed: not exit 4"
done
$P --version > /dev/full 2> /dev/null
[ $? -eq 4 ] || no "--version > /dev/full: not exit 4"
$P --version >&- 2> /dev/null
[ $? -eq 4 ] || no "--version, stdout closed: not exit 4"
$P --version > /dev/null || no "--version > /dev/null: exit $?"

# 6. stderr closed: the error's own exit code
$P --model $M --cluster $C --top 0 2>&-
[ $? -eq 2 ] || no "usage error, stderr closed: not exit 2"
echo '{' > "$T/bad.json"
$P --model "$T/bad.json" --cluster $C 2>&-
[ $? -eq 1 ] || no "input error, stderr closed: not exit 1"
$P --model $M --cluster $C --fix tp=64 > /dev/null 2>&-
[ $? -eq 3 ] || no "no plan, stderr closed: not exit 3"
$P --model $M --cluster $C -o "$T/ok.txt" --top 1 2>&- || no "success, stderr closed: exit $?"
grep -q '^planner:' "$T/ok.txt" && no "an error message went into the output file"

# 7. no plan fits, --format json: the document is the answer (exit 3), written
#    to -o; there is no plan to trace, so --trace writes nothing
$P --model $M --cluster $C --fix tp=64 --format json -o "$T/none.json" --trace "$T/none-t.json" 2> /dev/null
[ $? -eq 3 ] || no "no plan, json: not exit 3"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["strategies"] == [] and d["advice"]' \
    "$T/none.json" || no "no plan, json: no document in -o"
[ -e "$T/none-t.json" ] && no "no plan: --trace written"
$P --model $M --cluster $C --fix tp=64 -o "$T/none.txt" 2> /dev/null
[ -e "$T/none.txt" ] && no "no plan, table: -o written"
$P --model $M --cluster $C --fix tp=64 --format json -o "$FULL" 2> /dev/null
[ $? -eq 4 ] || no "no plan, json to /dev/full: not exit 4"

# 8. a full disk (a 64 KiB tmpfs, as root in a private mount namespace):
#    exit 4 with the path, no partial file, for -o JSON, --svg and a sweep
if [ "$(id -u)" -eq 0 ] && unshare -m true 2> /dev/null; then
    mkdir "$T/small"
    unshare -m sh -c '
        mount -t tmpfs -o size=64k tmpfs "$1/small" || exit 9
        P=$2; M=$3; C=$4; D=$1/small
        $P --model $M --cluster $C --format json -o $D/r.json 2> $1/full1; echo $? > $1/rc1
        $P --model $M --cluster $C -o $D/r.txt --svg $D/s.svg 2> $1/full2; echo $? > $1/rc2
        dd if=/dev/zero of=$D/fill bs=1k count=60 2> /dev/null
        $P sweep --model $M --cluster $C --gbs 256,512,768,1024,1536,2048,2560,3072,4096,6144,8192,12288 --format jsonl \
            -o $D/s.jsonl 2> $1/full3; echo $? > $1/rc3
        rm -f $D/fill; ls -a $D > $1/left' sh "$T" "$P" "$M" "$C"
    if [ $? -eq 9 ]; then
        echo "SKIP: full-disk tests (cannot mount a tmpfs)"
    else
        for i in 1 2 3; do
            [ "$(cat "$T/rc$i")" = 4 ] || no "full disk case $i: exit $(cat "$T/rc$i"): $(cat "$T/full$i")"
            grep -q "^planner: $T/small/.*: write error: No space left on device" "$T/full$i" \
                || no "full disk case $i: $(cat "$T/full$i")"
        done
        [ "$(grep -cv '^\.\.\?$' "$T/left")" -eq 0 ] || no "full disk left files: $(cat "$T/left")"
    fi
else
    echo "SKIP: full-disk tests on a tmpfs (need root and unshare); /dev/full cases above"
fi

# 9. sweep: -o naming a shard being merged or a file of the sweep is refused;
#    a damaged shard is refused with its FILE:LINE:COL, nothing merged
$P sweep --model $M --cluster $C --gbs 512,1024,1536 --shard 0/2 -o "$T/s0.csv" || no "shard 0: exit $?"
$P sweep --model $M --cluster $C --gbs 512,1024,1536 --shard 1/2 -o "$T/s1.csv" || no "shard 1: exit $?"
cp "$T/s0.csv" "$T/s0.keep"
$P sweep --merge "$T/s0.csv" "$T/s1.csv" -o "$T/./s0.csv" 2> "$T/err"
[ $? -eq 2 ] || no "merge -o over a shard: not exit 2"
grep -q -- "-o names the same file as the shard" "$T/err" || no "merge -o over a shard: $(cat "$T/err")"
cmp -s "$T/s0.csv" "$T/s0.keep" || no "merge -o over a shard changed the shard"
$P sweep --merge "$T/s0.csv" "$T/s1.csv" >> "$T/s1.csv" 2> /dev/null
[ $? -eq 2 ] || no "merge >> a shard: not exit 2"
$P sweep --model "$T/m.json" --cluster $C --gbs 512 -o "$T/hard.json" 2> /dev/null
[ $? -eq 2 ] || no "sweep -o over its model (a hard link): not exit 2"
cmp -s $M "$T/m.json" || no "sweep -o over its model changed it"
$P sweep --merge "$T/s0.csv" "$T/s1.csv" -o "$T/merged.csv" || no "merge: exit $?"
head -c -7 "$T/s1.csv" > "$T/s1-cut.csv"
$P sweep --merge "$T/s0.csv" "$T/s1-cut.csv" -o "$T/m2.csv" 2> "$T/err"
[ $? -eq 1 ] || no "merge of a cut shard: not exit 1"
grep -q "^planner: $T/s1-cut.csv:2:[0-9]*: the last line has no newline" "$T/err" || no "cut shard: $(cat "$T/err")"
[ -e "$T/m2.csv" ] && no "merge of a cut shard wrote its output"
sed '2s/^1,/1.0,/' "$T/s1.csv" > "$T/s1-float.csv"
$P sweep --merge "$T/s0.csv" "$T/s1-float.csv" 2> "$T/err" > "$T/out"
[ $? -eq 1 ] || no "merge of a shard with a float index: not exit 1"
grep -q "^planner: $T/s1-float.csv:2:1: not a sweep line: point: expected an integer, got '1.0'" "$T/err" \
    || no "float index: $(cat "$T/err")"
[ -s "$T/out" ] && no "a refused merge printed lines"

# 10. unbounded outputs: every valid plan renders, its trace bounded with a
#     note in the file and on stderr (GPT-3 at gbs 32768, tp 8, pp 32, vpp 3:
#     16,384 micro-batches, over 6 million events; gbs 1e8 at mbs 1)
$P --model $M --cluster $C --gbs 32768 --fix tp=8,pp=32,vpp=3,mbs=1 -o "$T/big.txt" \
    --trace "$T/big.json" --svg "$T/big.svg" 2> "$T/err"
rc=$?
[ $rc -eq 0 ] || no "GPT-3 gbs 32768 pp 32 vpp 3: exit $rc: $(cat "$T/err")"
grep -q "^planner: $T/big.json: note: micro-batches [0-9]*\.\.[0-9]* elided" "$T/err" \
    || no "no trace note on stderr: $(cat "$T/err")"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
o = d["otherData"]
assert o["microbatches"] == 16384 and o["elided_microbatches"] > 0, o
assert "elided" in o["note"]
assert len(d["traceEvents"]) <= 500000 + 32 * 20, len(d["traceEvents"])
ends = [e["ts"] + e["dur"] for e in d["traceEvents"] if e.get("ph") == "X"]
assert abs(max(ends) / 1e6 - o["simulated_step_s"]) < 1e-6 * o["simulated_step_s"], (max(ends), o)
' "$T/big.json" || no "bounded trace"
grep -q 'elided (more than' "$T/big.svg" || no "no note in the SVG"
$P --model $M --cluster $C --gbs 100000000 --fix mbs=1 --top 1 --trace "$T/huge.json" > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 0 ] || no "gbs 1e8 at mbs 1: exit $rc: $(cat "$T/err")"
grep -q "note: micro-batches" "$T/err" || no "gbs 1e8: no note"

# 11. calibrate: -o naming the runs file is refused before the fit
echo '{"runs": []}' > "$T/runs.json"
cp "$T/runs.json" "$T/runs.keep"
$P calibrate --runs "$T/runs.json" -o "$T/./runs.json" > /dev/null 2> "$T/err"
[ $? -eq 2 ] || no "calibrate -o over --runs: not exit 2: $(cat "$T/err")"
grep -q -- "-o names the same file as --runs" "$T/err" || no "calibrate -o over --runs: $(cat "$T/err")"
cmp -s "$T/runs.json" "$T/runs.keep" || no "calibrate -o over --runs changed the runs file"

# 12. an empty file name: named as such (exit 4), not an unnamed "No such
# file" or "-o: is a directory"; an output that cannot be created names its
# option however late it fails (the temporary beside a file in /proc)
$P --model "" --cluster $C > "$T/out" 2> "$T/err"
[ $? -eq 4 ] || no "--model '': not exit 4: $(cat "$T/err")"
grep -qx "planner: cannot open '': empty file name" "$T/err" || no "--model '': $(cat "$T/err")"
$P validate "" > /dev/null 2> "$T/err"
[ $? -eq 4 ] || no "validate '': not exit 4: $(cat "$T/err")"
grep -qx "planner: cannot open '': empty file name" "$T/err" || no "validate '': $(cat "$T/err")"
for opt in -o --trace --svg; do
    $P --model $M --cluster $C $opt "" > "$T/out" 2> "$T/err"
    [ $? -eq 4 ] || no "$opt '': not exit 4: $(cat "$T/err")"
    grep -qx "planner: $opt: cannot create '': empty file name" "$T/err" ||
        no "$opt '': $(cat "$T/err")"
done
[ -s "$T/out" ] && no "report printed although an output had an empty name"
leftovers "$T"
if [ -f /proc/version ]; then
    $P --model $M --cluster $C --top 1 -o /proc/version > /dev/null 2> "$T/err"
    [ $? -eq 4 ] || no "-o /proc/version: not exit 4: $(cat "$T/err")"
    grep -q "^planner: /proc/version: -o: cannot create: " "$T/err" ||
        no "-o /proc/version: $(cat "$T/err")"
else
    echo "SKIP outputs.sh: no /proc/version (an output whose temporary cannot be created)"
fi

[ "$fail" -eq 0 ] && echo "outputs.sh: ok"
exit "$fail"
