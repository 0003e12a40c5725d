#!/bin/sh
# The slow tier (make check-slow): leave-one-source-out cross-validation on
# the public corpus, the headline accuracy figure of README ("Accuracy"),
# and calibration on 3 runs of each source it left out.
# Each of the 13 folds (--subset dense: dense 16-bit and FP8 runs) refits the
# default list of constants (default prior) on the other 12 sources and
# predicts the one left out; then each source of at least 6 runs is
# calibrated on 3 of its runs from its fold's fit and the rest predicted.
# Measured: dense 16-bit 7.7% (in-sample 6.9%), FP8 9.2% (8.6%), the 52
# calibrated runs 7.7% (8.2% from the fits on the other sources), 3 of 7
# sources improved (the prior 1.0, the recipes' bf16 gradient reduce,
# Megatron-FSDP's prefetched ZeRO-3, fits that never end above their
# start; 8.5%, 10.6%, 9.0% and 5 of 7 at af042bb, 7.5%, 10.9%, 8.7% and 4
# of 7 at 1233bd4).  About 3 min of CPU, so it is not in `make check`.
# The bounds are the figures plus half a point, and 3 of 7 sources for the
# calibration: not the majority the issue asks; before the fits kept their
# start when they ended above it, 5 of 7 (FP8 9.9%), but two of those wins
# started from fits worse than the defaults (SC21 Table 1 and
# Megatron-Bridge 26.06 left out: training RMS 12.5% and 13.3% against
# 10.9% and 10.6% at the defaults); SC21 Table 1 now ties at 6.3%.
# Round 6 (2026-11: the network collectives' own overlap share, then the
# defaults refitted on the corpus): dense 6.4%, FP8 8.5%, the 52 calibrated
# runs 7.0% from 7.0%, 4 of 7 sources -- but 11 of the 13 folds now keep
# the defaults they start from (fitted on every source), so the fold
# figures are the in-sample ones; from the constants before that refit
# the folds refit and give dense 6.9%, FP8 9.4%.  Bounds: the figures plus
# half a point, and a majority (4 of 7).
# 2026-11-25: every fold starts from the unfitted constants
# (cost_params_unfitted, src/cost/layer_cost.c: none fitted on any run;
# the prior's centre and the fallback too), so no fold sees its left-out
# source: dense 8.6%, FP8 8.1%, the 52 calibrated runs 7.9% from 8.1%, 5 of
# 7 sources.  Bounds: the figures plus half a point, and a majority (4 of 7).
# Then the Megatron-LM 2020 runs costed with the full recompute they ran:
# dense 8.4%, FP8 8.3%, the 52 calibrated runs 7.9% from 8.1%, 4 of 7;
# and with every stack on its generation's host time (none its own):
# dense 7.1%, FP8 8.3%, the 52 calibrated runs 7.6% from 7.5%, 4 of 7;
# with per-tensor FP8 weights at 1 B on Blackwell (memory_fp8_weights_single):
# dense 7.1%, FP8 7.0%, the 52 calibrated runs 6.6% from 6.9%, 4 of 7;
# and with Megatron-FSDP's ZeRO-3 waiting in every micro-batch and chunk
# (evaluate.c rank_zero3_prefetch): dense 7.1%, FP8 8.9%, the 52 calibrated
# runs 7.5% from 8.0%, 5 of 7 (bounds FP8 9.4, calibrated 8.0).
# docs/validation.md, "Leave one source out", and docs/calibration.md,
# "Calibrating on a few runs", have the figures.
# Without ../shared it says SKIP and exits 77.
set -u
P=./planner
R=../shared/validation/published-runs.json
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ ! -f "$R" ]; then
    echo "SKIP loso.sh: $R absent"
    exit 77
fi
$P crossval --runs "$R" --folds loso --calibrate-on 3 > "$T/cv" 2>&1 ||
    fail "crossval exit $?: $(cat "$T/cv")"
grep -q '^crossval: .*, 91 runs from 13 sources, 13 folds by source' "$T/cv" ||
    fail "header: $(head -1 "$T/cv")"
# check SUBSET RUNS BOUND TABLE: the "MAPE calibrated" column (the left-out
# or calibrated runs') of the subset's line in table TABLE (1: the folds'
# totals, 2: the calibrate-on table's), in percent, against BOUND
check() {
    line=$(grep "^$1 " "$T/cv" | sed -n "${4}p")
    [ -n "$line" ] || fail "no '$1' line $4: $(cat "$T/cv")"
    n=$(printf '%s\n' "$line" | awk '{print $(NF - 4)}')
    [ "$n" -eq "$2" ] || fail "$1 ($4): $n runs, expected $2"
    v=$(printf '%s\n' "$line" | awk '{ sub(/%/, "", $(NF - 2)); print $(NF - 2) }')
    awk -v v="$v" -v b="$3" 'BEGIN { exit !(v <= b) }' || fail "$1 ($4): MAPE $v% above $3%"
    echo "$1 ($4): MAPE $v% (bound $3%)"
}
check "dense 16-bit" 53 7.6 1
check "FP8 family" 38 9.4 1
check "all" 52 8.0 2
# MoE (--subset moe: 39 runs, 6 Megatron-Bridge releases, one fold each):
# 22.3% with the recipes' all-to-all overlap and 25.11's DeepSeek-V3 rows
# without MTP (24.4% before), 20.6% with 26.06's Qwen3-30B-A3B B300 MXFP8
# full-iteration graph and overlap, 18.9% with the recipes' HybridEP flex
# dispatcher (one copy per destination rank); bound half a point above.
$P crossval --runs "$R" --folds loso --subset moe > "$T/moe" 2>&1 ||
    fail "crossval --subset moe exit $?: $(cat "$T/moe")"
line=$(grep "^MoE " "$T/moe")
n=$(printf '%s\n' "$line" | awk '{print $2}')
v=$(printf '%s\n' "$line" | awk '{ sub(/%/, "", $4); print $4 }')
[ "$n" = 39 ] || fail "MoE: '$n' runs, expected 39: $(cat "$T/moe")"
awk -v v="$v" 'BEGIN { exit !(v <= 19.4) }' || fail "MoE: leave-one-source-out MAPE $v% above 19.4%"
echo "MoE: MAPE $v% (bound 19.4%)"
better=$(sed -n 's/^calibrated beats its start .* on \([0-9]*\) of 7 sources$/\1/p' "$T/cv")
[ -n "$better" ] && [ "$better" -ge 4 ] ||
    fail "calibrated on 3 runs beats the fit on the other sources on '$better' of 7 sources"
echo "calibrated on 3 runs beats its start on $better of 7 sources"
exit 0
