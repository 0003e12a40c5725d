#!/bin/sh
# CLI tests of `planner sweep`: a sharded run merged back is byte-identical to
# the unsharded run (CSV and JSON Lines); point order and the best plan agree
# with `planner --format json` at the same point; bad grids and options give
# the documented exit codes; nothing partial is written; a write error on
# stdout is exit 4.
set -u
P=./planner
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

M=configs/gpt3-175b.json
L=configs/llama3-8b.json
C=clusters/h100x512.yaml
for f in "$M" "$L" "$C"; do [ -f "$f" ] || { echo "SKIP sweep.sh: $f absent"; exit 77; }; done
A="--model $M --model $L --cluster $C --nodes 8..32x2 --gbs 512,1024"

# unsharded: header + 2 models x 3 node counts x 2 batches = 12 lines, in order
$P sweep $A > "$T/full.csv" || fail "unsharded sweep exit $?"
[ "$(wc -l < "$T/full.csv")" -eq 13 ] || fail "expected 13 lines, got $(wc -l < "$T/full.csv")"
head -n 1 "$T/full.csv" | grep -q '^point,points,model,cluster,gpu,nodes,gpus,gbs,seq,' ||
    fail "CSV header"
[ "$(tail -n +2 "$T/full.csv" | cut -d, -f1 | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 8 9 10 11 " ] ||
    fail "point order"
[ "$(tail -n +2 "$T/full.csv" | cut -d, -f2 | sort -u)" = "12" ] || fail "points column"
# the last axis varies fastest: point 1 = gpt3, 8 nodes (64 GPUs), gbs 1024
sed -n 3p "$T/full.csv" | grep -q "^1,12,$M,$C,H100-SXM,8,64,1024,2048,1,1,1,ok," ||
    fail "point 1 fields: $(sed -n 3p "$T/full.csv")"

# the point's plan is the plan command's winner on that cluster size
sed -n '1p;9p' "$T/full.csv" > "$T/p7"    # the header and point 7: llama3-8b, 8 nodes, gbs 1024
$P --model "$L" --cluster "$C" --gbs 1024 --fix gpus=64 --top 1 --format json > "$T/plan.json" ||
    fail "plan exit $?"
python3 - "$T/p7" "$T/plan.json" <<'PY' || fail "sweep point differs from planner --fix gpus=64"
import csv, json, sys
row = next(csv.DictReader(open(sys.argv[1])))
best = json.load(open(sys.argv[2]))["strategies"][0]
keys = ("tp", "pp", "dp", "cp", "ep", "vpp", "mbs", "recompute_layers", "zero")
assert [row[k] for k in keys] == [str(best[k]) for k in keys], (row, best)
assert row["sp"] == ("on" if best["sp"] else "off"), (row, best)
assert row["recompute"] == best["recompute"], (row, best)
assert abs(float(row["step_time_s"]) - best["step_time_s"]) <= 1e-5 * best["step_time_s"], (row, best)
PY

# sharded into 5 (shards 0 and 1 get 3 points, the others 2), merged in any order
for i in 0 1 2 3 4; do
    $P sweep $A --shard $i/5 -o "$T/s$i.csv" || fail "shard $i exit $?"
done
[ "$(tail -n +2 "$T/s1.csv" | cut -d, -f1 | tr '\n' ' ')" = "1 6 11 " ] || fail "shard 1/5 points"
$P sweep --merge "$T/s3.csv" "$T/s0.csv" "$T/s4.csv" "$T/s1.csv" "$T/s2.csv" > "$T/merged.csv" ||
    fail "merge exit $?"
cmp "$T/merged.csv" "$T/full.csv" || fail "merged CSV differs from the unsharded run"

# a missing shard: exit 1, no output file
$P sweep --merge "$T/s0.csv" "$T/s1.csv" "$T/s2.csv" "$T/s3.csv" -o "$T/m2.csv" 2> "$T/err"
[ $? -eq 1 ] || fail "merge with a shard missing: expected exit 1"
grep -q 'missing, the first is point 4' "$T/err" || fail "missing-shard message: $(cat "$T/err")"
[ ! -e "$T/m2.csv" ] || fail "partial merge output written"

# JSON Lines, sharded and merged
$P sweep $A --format jsonl > "$T/full.jsonl" || fail "jsonl exit $?"
$P sweep $A --format jsonl --shard 0/2 > "$T/j0.jsonl" || fail "jsonl shard 0"
$P sweep $A --format jsonl --shard 1/2 > "$T/j1.jsonl" || fail "jsonl shard 1"
$P sweep --merge "$T/j1.jsonl" "$T/j0.jsonl" > "$T/merged.jsonl" || fail "jsonl merge"
cmp "$T/merged.jsonl" "$T/full.jsonl" || fail "merged JSON Lines differ"
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["point"] for r in rows] == list(range(12))
assert all(r["status"] == "ok" and r["tp"] >= 1 for r in rows), rows
' "$T/full.jsonl" || fail "JSON Lines content"

# a grid file gives the same grid as the options
cat > "$T/grid.txt" <<GRID
# the same grid as \$A
model = $M, $L
cluster = $C
nodes = 8..32x2
gbs = 512, 1024
GRID
$P sweep --grid "$T/grid.txt" > "$T/grid.csv" || fail "grid file exit $?"
cmp "$T/grid.csv" "$T/full.csv" || fail "grid file differs from the options"

# what-ifs: GPU type, bandwidth and peak scales appear in the line
$P sweep --model "$L" --cluster "$C" --nodes 2 --gpu H100,A100 --peak-scale 1,2 > "$T/w.csv" ||
    fail "what-if exit $?"
sed -n 2p "$T/w.csv" | grep -q ',H100-SXM,2,16,' || fail "gpu column"
sed -n 4p "$T/w.csv" | grep -q ',A100-SXM-80GB,2,16,.*,1,1,1,ok,' || fail "A100 point"
python3 - "$T/w.csv" <<'PY' || fail "doubling peak FLOP/s must not slow the step"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
for a, b in ((r[0], r[1]), (r[2], r[3])):
    assert float(b["step_time_s"]) <= float(a["step_time_s"]), (a, b)
PY

# infeasible points are lines, not failures
$P sweep --model "$M" --cluster "$C" --nodes 1 > "$T/inf.csv" || fail "infeasible sweep exit $?"
sed -n 2p "$T/inf.csv" | grep -q ',infeasible,' || fail "infeasible status"

# the model file's warnings are printed once, as planning prints them
sed 's/"num_attention_heads": 32,/"num_attention_heads": 32, "head_dim": 64,/' "$L" > "$T/hd.json"
$P sweep --model "$T/hd.json" --cluster "$C" --nodes 1,2 > "$T/hd.csv" 2> "$T/err" ||
    fail "sweep with a model warning: exit $?"
[ "$(grep -c "^planner: $T/hd.json: warning: head_dim 64 is not hidden_size / num_attention_heads" \
    "$T/err")" -eq 1 ] || fail "sweep: the model's warning not printed once: $(cat "$T/err")"
[ "$(wc -l < "$T/hd.csv")" -eq 3 ] || fail "sweep with a model warning: rows"

# errors: bad grid file (exit 1, FILE:LINE:COL), bad options (exit 2), bad files (exit 1)
printf 'model = %s\ncluster = %s\nnodes = 4, x\n' "$M" "$C" > "$T/bad.txt"
$P sweep --grid "$T/bad.txt" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 1 ] || fail "bad grid file: exit $rc"
grep -q "^planner: $T/bad.txt:3:12: nodes: expected an integer" "$T/err" || fail "grid error: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "output written for a bad grid"
$P sweep $A --shard 5/5 > /dev/null 2>&1; [ $? -eq 2 ] || fail "--shard 5/5 should be exit 2"
$P sweep $A --nodes 0 > /dev/null 2>&1; [ $? -eq 2 ] || fail "--nodes 0 should be exit 2"
$P sweep $A --format xml > /dev/null 2>&1; [ $? -eq 2 ] || fail "--format xml should be exit 2"
$P sweep --cluster "$C" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no model should be exit 2"
$P sweep --model "$M" --cluster "$C" --nodes 1..100000 > /dev/null 2>&1
[ $? -eq 2 ] || fail "over the value limit should be exit 2"
$P sweep --model "$T/nope.json" --cluster "$C" > "$T/out" 2>&1; [ $? -eq 4 ] ||
    fail "missing model file should be exit 4"
# shipped names as plan and size take them (tool/shipped.c): the same lines,
# the names as given; a name neither a file nor shipped is exit 4 naming it;
# -o over the named file is refused as over any input
$P sweep --model llama3-8b --cluster h100x512 --nodes 8 > "$T/named.csv" 2> "$T/err" ||
    fail "sweep by name: exit $?: $(cat "$T/err")"
$P sweep --model "$L" --cluster "$C" --nodes 8 > "$T/files.csv" || fail "sweep by file: exit $?"
[ "$(sed "s|^0,1,$L,$C,|0,1,llama3-8b,h100x512,|" "$T/files.csv")" = "$(cat "$T/named.csv")" ] ||
    fail "sweep by name: $(cat "$T/named.csv")"
$P sweep --model llama3-8b --cluster h100x51 > "$T/out" 2> "$T/err"; [ $? -eq 4 ] ||
    fail "sweep, unknown cluster name: not exit 4"
grep -qx "planner: 'h100x51': no such file, and no shipped cluster of that name \
(did you mean 'h100x512'?)" "$T/err" || fail "sweep, unknown cluster name: $(cat "$T/err")"
cp "$L" "$T/m.json"
$P sweep --model llama3-8b --cluster h100x512 --nodes 8 -o "$L" > /dev/null 2> "$T/err"
[ $? -eq 2 ] || fail "sweep -o over a shipped model named: not exit 2"
cmp -s "$L" "$T/m.json" || fail "sweep -o over a shipped model named: the file changed"
if [ -f clusters/h100-a100-mixed.yaml ]; then
    $P sweep --model "$M" --cluster clusters/h100-a100-mixed.yaml --nodes 8 > /dev/null 2>&1
    [ $? -eq 2 ] || fail "--nodes on a two-group cluster should be exit 2"
else
    echo "SKIP sweep.sh --nodes on a two-group cluster: clusters/h100-a100-mixed.yaml absent"
fi
$P sweep $A -o "$T/nodir/x.csv" > /dev/null 2>&1; [ $? -eq 4 ] || fail "unwritable -o should be exit 4"
if [ -c /dev/full ] && [ -w /dev/full ]; then
    $P sweep $A > /dev/full 2> "$T/err"; rc=$?
    [ $rc -eq 4 ] || fail "write error on stdout: exit $rc"
    $P sweep --merge "$T/s0.csv" "$T/s1.csv" "$T/s2.csv" "$T/s3.csv" "$T/s4.csv" > /dev/full 2>/dev/null
    [ $? -eq 4 ] || fail "merge to /dev/full should be exit 4"
else
    echo "SKIP sweep.sh write error on stdout: /dev/full is not a writable character device"
fi
# time to train (--tokens): the plan table's figures as columns, filled on
# every ok line, merged back byte for byte; an ok line with only some of
# them is not a line of this planner
$P sweep $A --tokens 1e12 -o "$T/tt.csv" || fail "--tokens sweep exit $?"
hdr=$(head -n 1 "$T/tt.csv")
case $hdr in *,ettr,goodput_tokens_per_s,time_to_train_s,gpu_hours,cost,energy_kwh,reason) ;;
    *) fail "--tokens sweep header: $hdr" ;; esac
grep ',ok,' "$T/tt.csv" | grep -q ',,,,,$' && fail "--tokens sweep: an ok line without its time to train"
grep ',ok,' "$T/tt.csv" | head -n 1 | grep -Eq ',[0-9.e+]+,[0-9.e+]+,[0-9.e+]+,[0-9.e+]+,$' ||
    fail "--tokens sweep: no time to train, GPU-hours, cost, energy on an ok line"
for i in 0 1; do $P sweep $A --tokens 1e12 --shard $i/2 -o "$T/tt$i.csv" || fail "tokens shard $i"; done
$P sweep --merge "$T/tt1.csv" "$T/tt0.csv" > "$T/ttm.csv" || fail "tokens merge exit $?"
cmp -s "$T/ttm.csv" "$T/tt.csv" || fail "tokens merge differs from the unsharded sweep"
awk -F, 'BEGIN { OFS = "," } NR > 1 && $13 == "ok" && !done { $(NF-2) = ""; done = 1 } { print }' \
    "$T/tt0.csv" > "$T/ttbad.csv"
$P sweep --merge "$T/ttbad.csv" "$T/tt1.csv" > /dev/null 2> "$T/err"
[ $? -eq 1 ] && grep -q 'plan column' "$T/err" || fail "a half-filled time to train was merged: $(cat "$T/err")"
$P sweep --help | grep -q -- '--shard I/N' || fail "sweep --help"
# the synopsis and the axis rows say what --model and --cluster take, as
# 'planner --help' does (FILE|NAME: a file or a shipped name; a comma list)
$P sweep --help > "$T/help"
head -n 1 "$T/help" | grep -qxF 'Usage: planner sweep --model FILE|NAME[,...] --cluster FILE|NAME[,...]' ||
    fail "sweep --help synopsis: $(head -n 1 "$T/help")"
grep -qxF '  -m, --model FILE|NAME[,...]' "$T/help" || fail "sweep --help: the --model row"
grep -qxF '  -c, --cluster FILE|NAME[,...]' "$T/help" || fail "sweep --help: the --cluster row"
grep -q 'FILES' "$T/help" && fail "sweep --help still says FILES"
echo "sweep.sh: ok"
