#!/bin/sh
# Runs one libFuzzer harness built by `make fuzz`, niced, for a time or a
# number of executions, and prints the figures for docs/testing.md.
# Usage: tests/fuzz/run.sh TARGET [SECONDS] [RUNS] [libFuzzer options...]
#   TARGET    constraints, model, cluster, sweep (tests/fuzz/fuzz_TARGET.c)
#   SECONDS   -max_total_time (default 60); RUNS: -runs (default: no limit)
# The seeds in tests/fuzz/corpus/TARGET are read, never written: new inputs
# go to build-fuzz/corpus/TARGET, crashes to build-fuzz/artifacts/TARGET/
# (copy each into tests/fuzz/regress/TARGET/ once understood), the log to
# build-fuzz/TARGET.log.
set -eu
target=$1
secs=${2:-60}
runs=${3:--1}
[ $# -ge 3 ] && shift 3 || shift $#
bin=build-fuzz/fuzz_$target
[ -x "$bin" ] || { echo "run.sh: $bin missing; run 'make fuzz'" >&2; exit 2; }
work=build-fuzz/corpus/$target
art=build-fuzz/artifacts/$target
mkdir -p "$work" "$art"
dict=""
[ -f "tests/fuzz/$target.dict" ] && dict="-dict=tests/fuzz/$target.dict"
# Sanitizer settings as in the sanitizer tier; leaks are checked per input.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OPENBLAS_NUM_THREADS=1
rc=0
# shellcheck disable=SC2086
nice -n 19 "$bin" -max_total_time="$secs" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$art/" $dict "$@" \
    "$work" "tests/fuzz/corpus/$target" >"build-fuzz/$target.log" 2>&1 || rc=$?
grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|^#[0-9]+.*DONE' \
    "build-fuzz/$target.log" || true
echo "run.sh: $target exit $rc; crashes: $(ls "$art" | wc -l) in $art"
exit $rc
