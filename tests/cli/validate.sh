#!/bin/sh
# validate.sh: `planner validate` on a small runs file: table and JSON output,
# an MoE run (predicted), positioned input errors, usage errors.
set -u
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$tmp/runs.json" <<'JSON'
{"runs": [
 {"id": "k175", "source": "Korthikanti et al. Table 5", "gpu": "A100-SXM-80GB",
  "num_gpus": 64, "gpus_per_node": 8,
  "model": {"layers": 96, "hidden": 12288, "heads": 96, "kv_heads": 96, "ffn_hidden": 49152,
            "vocab": 51200, "seq_len": 2048, "activation": "gelu"},
  "parallel": {"tp": 8, "pp": 8, "dp": 1, "cp": 1, "ep": 1, "vpp": 3, "mbs": 1, "gbs": 64,
               "sequence_parallel": true, "recompute": "selective"},
  "precision": "bf16", "measured": {"tokens_per_s_per_gpu": 148.945, "step_time_s": 13.75},
  "unpublished": []},
 {"id": "moe1", "source": "test", "gpu": "H100-SXM", "num_gpus": 8, "gpus_per_node": 8,
  "model": {"layers": 4, "hidden": 1024, "heads": 8, "kv_heads": 8, "ffn_hidden": 4096,
            "vocab": 32000, "seq_len": 1024, "activation": "swiglu",
            "moe": {"moe_experts": 8, "moe_topk": 2, "moe_ffn_hidden": 4096}},
  "parallel": {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 8, "vpp": null, "mbs": null,
               "gbs": 64, "sequence_parallel": null, "recompute": null},
  "precision": "bf16", "measured": {"tokens_per_s_per_gpu": 1000, "step_time_s": 1},
  "unpublished": ["mbs", "vpp"]}
]}
JSON

out=$(./planner validate "$tmp/runs.json") || fail "validate exited $?"
echo "$out" | grep -q '^k175 ' || fail "no row for k175"
echo "$out" | grep -q '^moe1 .*%' || fail "MoE run not predicted"
echo "$out" | grep -q '^MoE *1 *1 ' || fail "no MoE summary"
echo "$out" | grep -q '^dense 16-bit *1 *1 ' || fail "no dense 16-bit summary"

json=$(./planner validate --format json "$tmp/runs.json") || fail "json exited $?"
echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = {x["id"]: x for x in d["runs"]}
assert r["k175"]["status"] == "ok", r["k175"]
assert r["k175"]["predicted_tokens_per_s_per_gpu"] > 0
assert abs(r["k175"]["measured_tokens_per_s_per_gpu"] - 148.945) < 1e-3
assert r["moe1"]["status"] == "ok" and r["moe1"]["subset"] == "MoE", r["moe1"]
assert d["summary"]["dense16"]["runs"] == 1 and d["summary"]["moe"]["predicted"] == 1
' || fail "JSON output"

# input errors: positioned, exit 1, nothing on stdout
printf '{"runs": [\n  {"id": }]}' >"$tmp/bad.json"
./planner validate "$tmp/bad.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] || fail "bad JSON should exit 1"
grep -q "^planner: $tmp/bad.json:2:" "$tmp/err" || fail "no position: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "partial output on error"
# schema errors are positioned too (the issue's example: "id" is column 12)
printf '{"runs": [{"id": 5}]}' >"$tmp/r.json"
./planner validate "$tmp/r.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] || fail "a wrong type should exit 1"
[ "$(cat "$tmp/err")" = "planner: $tmp/r.json:1:12: runs[0].id: expected a string" ] ||
    fail "schema error: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "partial output on error"
sed 's/A100-SXM-80GB/A100-XYZ/' "$tmp/runs.json" >"$tmp/gpu.json"
./planner validate "$tmp/gpu.json" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "unknown GPU should exit 1"
grep -q 'runs\[0\].gpu' "$tmp/err" || fail "no key path: $(cat "$tmp/err")"
sed 's/"moe_topk": 2, //' "$tmp/runs.json" >"$tmp/moe.json"
./planner validate "$tmp/moe.json" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "MoE row without moe_topk should exit 1"
grep -q 'runs\[1\].model.moe.moe_topk' "$tmp/err" || fail "no MoE key path: $(cat "$tmp/err")"
./planner validate "$tmp/missing.json" >/dev/null 2>&1
[ $? -eq 4 ] || fail "missing file should exit 4"
# a model library that is not a folder is an I/O error, never "no library"
for cmd in "validate $tmp/runs.json" "calibrate --runs $tmp/runs.json" "crossval --runs $tmp/runs.json"; do
    # shellcheck disable=SC2086
    ./planner $cmd --models "$tmp/no-such-folder" >/dev/null 2>"$tmp/err"
    [ $? -eq 4 ] || fail "$cmd --models MISSING should exit 4"
    grep -q 'no-such-folder: cannot read the model library' "$tmp/err" || fail "$cmd: $(cat "$tmp/err")"
    # shellcheck disable=SC2086
    ./planner $cmd --models "$tmp/runs.json" >/dev/null 2>"$tmp/err"
    [ $? -eq 4 ] || fail "$cmd --models FILE should exit 4"
done

# usage
./planner validate >/dev/null 2>&1
[ $? -eq 2 ] || fail "no FILE should exit 2"
./planner validate --format xml "$tmp/runs.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --format should exit 2"
./planner validate --help | grep -q 'Usage: planner validate' || fail "--help"
echo ok
