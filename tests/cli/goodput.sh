#!/bin/sh
# CLI tests of time to train under failures (docs/goodput.md): the done-when
# command of issue 13 prints the time with and without failures, ETTR, cost
# and energy; JSON carries the documented keys as finite numbers; the
# cluster YAML's reliability/storage blocks and the options override the
# defaults; bad values are usage errors (exit 2) naming the option; planner
# size finds the fewest nodes that fit and the node count for a deadline, and
# says by how much an impossible deadline is missed (exit 3), and takes a
# shipped model and cluster by name as plan does.  Expected
# figures are derived in the comments.  Run from the repository root.
set -u
P=./planner
M="--model configs/llama3.1-405b.json --cluster clusters/h100x16384.yaml --seq 8192 --gbs 2048"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. the done-when command
$P $M --tokens 15e12 --top 1 > "$T/out" 2> "$T/err" || fail "done-when: exit $?: $(cat "$T/err")"
for s in 'job MTTF  ' 'ETTR  ' 'Time to train 1.5e+13 tokens: ' ' days without failures)' \
         'GPU-hours  ' 'cost  ' 'energy  ' ' MWh'; do
    grep -q "$s" "$T/out" || fail "table lacks '$s'"
done
# 2,048 nodes x 3.79 per 1000 node-days (Llama 3's H100 rate) -> 3.09 h
grep -q 'job MTTF            3.09 h (2048 nodes x 3.79 failures per 1000 node-days' "$T/out" \
    || fail "MTTF line: $(grep MTTF "$T/out")"
# without --tokens (and no other such option) the table is as before
$P $M --top 1 > "$T/plain" || fail "plain run"
grep -q 'ETTR' "$T/plain" && fail "ETTR shown without being asked"

# 2. JSON: the issue's keys, finite numbers
$P $M --tokens 15e12 --top 2 --format json > "$T/j.json" || fail "json exit"
python3 - "$T/j.json" <<'PY' || fail "json keys"
import json, math, sys
d = json.load(open(sys.argv[1]))
for s in d["strategies"]:
    g = s["goodput"]
    for k in ("ettr", "mttf_s", "checkpoint_interval_s", "checkpoint_write_s", "restart_s"):
        assert isinstance(g[k], (int, float)) and math.isfinite(g[k]), k
    for k in ("time_to_train_s", "gpu_hours", "cost", "energy_kwh"):
        assert isinstance(s[k], (int, float)) and math.isfinite(s[k]) and s[k] > 0, k
    # time with failures = failure-free time / ETTR; failure-free = 15e12 / tokens/s
    assert abs(s["time_failure_free_s"] - 15e12 / s["tokens_per_s"]) <= 1e-9 * s["time_failure_free_s"]
    assert abs(s["time_to_train_s"] * g["ettr"] - s["time_failure_free_s"]) <= 1e-6 * s["time_to_train_s"]
    # GPU-hours = 16,384 x time / 3600
    assert abs(s["gpu_hours"] - 16384 * s["time_to_train_s"] / 3600) <= 1e-6 * s["gpu_hours"]
assert d["search"]["objective"] == "throughput"
PY

# 3. overrides: Kokolis's RSC-1 rate on 2,048 nodes -> MTTF 86400 / 13.312 = 6490 s;
# a 2-minute blocking checkpoint every 30 minutes, restart 10 min, price 2
$P $M --tokens 15e12 --top 1 --format json --failure-rate 6.5 --restart-time 10min \
    --checkpoint-write-time 2min --checkpoint-interval 30min --gpu-hour-price 2 > "$T/o.json" \
    || fail "overrides exit"
python3 - "$T/o.json" <<'PY' || fail "override values"
import json, math, sys
s = json.load(open(sys.argv[1]))["strategies"][0]
g = s["goodput"]
assert abs(g["mttf_s"] - 86400 / 13.312) < 1e-6, g["mttf_s"]
assert g["checkpoint_write_s"] == 120
assert 1800 <= g["checkpoint_interval_s"] < 1800 + s["step_time_s"] + 1e-9
assert abs(g["restart_s"] - 600 - g["checkpoint_load_s"]) < 1e-9
M, R, t, w = g["mttf_s"], g["restart_s"], g["checkpoint_interval_s"], 120
ettr = t / (M * math.exp(R / M) * math.expm1((t + w) / M))    # Daly's complete model
assert abs(g["ettr"] - ettr) < 1e-12, (g["ettr"], ettr)
assert abs(s["cost"] - 2 * s["gpu_hours"]) < 1e-6 * s["cost"]
PY
# the same through the cluster file's blocks
sed -e 's/^groups:/reliability:\n  failure_rate: 6.5\n  restart_time: 10min\nstorage:\n  write_bandwidth: 1TB\/s\n  read_bandwidth: 1TB\/s\ngroups:/' \
    clusters/h100x16384.yaml > "$T/rel.yaml"
$P --model configs/llama3.1-405b.json --cluster "$T/rel.yaml" --seq 8192 --gbs 2048 --top 1 \
    --tokens 15e12 --format json > "$T/r.json" || fail "reliability block: exit $?"
python3 - "$T/r.json" <<'PY' || fail "reliability block values"
import json, sys
s = json.load(open(sys.argv[1]))["strategies"][0]
g = s["goodput"]
assert abs(g["mttf_s"] - 86400 / 13.312) < 1e-6
# load = checkpoint bytes / 1 TB/s
assert abs(g["checkpoint_load_s"] - g["checkpoint_bytes"] / 1e12) < 1e-9
assert abs(g["restart_s"] - 600 - g["checkpoint_bytes"] / 1e12) < 1e-9
PY
sed -e 's/^groups:/reliability:\n  failure_rate: -2\ngroups:/' clusters/h100x16384.yaml > "$T/bad.yaml"
$P --model configs/llama3.1-405b.json --cluster "$T/bad.yaml" > /dev/null 2> "$T/err"
[ $? -eq 1 ] || fail "negative failure_rate in YAML: not exit 1"
grep -q "bad.yaml:[0-9]*:[0-9]*: cluster.reliability.failure_rate: must be failures per 1000 node-days" "$T/err" \
    || fail "YAML message: $(cat "$T/err")"

# 4. bad values: exit 2 naming the option, nothing on stdout
for bad in "--tokens 0" "--tokens -1" "--tokens 1e30" "--failure-rate 0" "--failure-rate nan" \
           "--restart-time -5min" "--checkpoint-interval 0" "--checkpoint-write-time -1" \
           "--gpu-hour-price 0" "--objective fastest"; do
    # shellcheck disable=SC2086
    $P $M $bad > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] || fail "$bad: exit $rc"
    [ -s "$T/out" ] && fail "$bad: wrote to stdout"
    opt=${bad%% *}
    grep -q -- "$opt" "$T/err" || fail "$bad: message does not name $opt: $(cat "$T/err")"
done
# a job that fails faster than it restarts: a clear answer, no inf/nan
$P $M --tokens 15e12 --top 1 --failure-rate 10000 --format json > "$T/n.json" || fail "never: exit"
grep -qi -E 'inf|nan' "$T/n.json" && fail "never: non-finite number in JSON"
grep -q '"error": "the job cannot finish' "$T/n.json" || fail "never: no reason"

# 5. planner size: the fewest nodes that fit, and the deadline
$P size $M --tokens 15e12 --deadline 90d > "$T/size" 2> "$T/err" || fail "size: exit $?: $(cat "$T/err")"
grep -q '^Fewest GPUs that fit: ' "$T/size" || fail "size: no fewest"
grep -q '^For the deadline: 2048 nodes' "$T/size" || fail "size: deadline choice: $(tail -3 "$T/size")"
$P size $M --tokens 15e12 --deadline 20d > "$T/size" 2> "$T/err"
[ $? -eq 3 ] || fail "size: an impossible deadline is not exit 3"
grep -q 'meets the deadline of 20 days: the fastest, 2048 nodes (16384 GPUs), takes [0-9.]* days, [0-9.]* days ([0-9]*%) too long; it would meet a deadline of [0-9.]* days, or train [0-9.e+]* tokens in 20 days' "$T/err" \
    || fail "size: the miss is not quantified: $(cat "$T/err")"
$P size $M --deadline 60d > /dev/null 2> "$T/err"
[ $? -eq 2 ] || fail "size: --deadline without --tokens"
# size takes shipped names as plan does (tool/shipped.c; before: "cannot open")
$P size -m llama3-8b -c h100x512 > "$T/named" 2> "$T/err" || fail "size by name: exit $?: $(cat "$T/err")"
$P size -m configs/llama3-8b.json -c clusters/h100x512.yaml > "$T/paths" || fail "size by path: exit $?"
[ -s "$T/named" ] && cmp -s "$T/named" "$T/paths" || fail "size by name differs from by path"
$P -m llama3-8b -c h100x512 --top 1 > /dev/null || fail "plan by name: exit $?"
# 6. sweeps get the goodput columns (with the failure options)
$P sweep --model configs/llama3-8b.json --cluster clusters/h100x512.yaml --nodes 8,16 \
    --failure-rate 6.5 > "$T/sweep.csv" || fail "sweep exit $?"
python3 - "$T/sweep.csv" <<'PY' || fail "sweep goodput columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2
for r in rows:
    e = float(r["ettr"])
    assert 0 < e < 1
    # goodput = tokens/s x ETTR (6 significant digits)
    assert abs(float(r["goodput_tokens_per_s"]) - float(r["tokens_per_s"]) * e) <= 1e-5 * float(r["tokens_per_s"])
PY
echo "goodput.sh: ok"
