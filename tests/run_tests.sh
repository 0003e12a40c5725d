#!/bin/sh
# Runs the fast test tier: every Check program given, then the CLI tests.
# Usage: tests/run_tests.sh BUILD_DIR TEST_BIN...
#
# Each program or script is one test: exit 0 passes, exit 77 means none of its
# checks could run here (skipped), anything else fails.  A check that cannot
# run (no ../shared, no shellcheck, ...) prints "SKIP NAME: REASON" on stdout;
# every distinct SKIP line of a test counts as one skipped check, and a test
# that exits 77 without one counts as one.  So a skipped check is never
# reported as passed.  The last line, read by CI, is
#     tests: N passed, N failed, N skipped
# (docs/testing.md, "Skipped checks").
set -u
build=$1; shift
failed=0; passed=0; skipped=0
# Check's per-test timeouts catch hangs; they are set for an idle machine
# (the slowest check, test_calibrate's fit of the corpus, takes ~30 s of CPU
# under a 120 s limit).  On a shared, loaded machine that limit is reached
# without a hang (load average 10 on 2 cores: 126 s), so the fast tier gives
# them 3x unless the caller says otherwise (make sanitize: 4x).
CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-3}
export CK_TIMEOUT_MULTIPLIER

# run_one NAME LOG COMMAND...: runs a test, prints its verdict and SKIP lines.
run_one() {
    name=$1; log=$2; shift 2
    "$@" >"$log" 2>&1
    rc=$?
    skips=$(grep '^SKIP ' "$log" | sort -u)
    n=0
    [ -n "$skips" ] && n=$(printf '%s\n' "$skips" | wc -l)
    if [ $rc -eq 77 ]; then
        [ "$n" -eq 0 ] && { skips="SKIP $name: exit 77"; n=1; }
        printf '%s\n' "$skips"
        skipped=$((skipped + n))
    elif [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        printf 'PASS %s\n' "$name"
        [ "$n" -gt 0 ] && printf '%s\n' "$skips"
        skipped=$((skipped + n))
    else
        failed=$((failed + 1))
        printf 'FAIL %s (exit %d)\n' "$name" $rc
        tail -n 30 "$log"
    fi
}

for t in "$@"; do
    run_one "$(basename "$t")" "$build/$(basename "$t").log" "$t"
done
for t in tests/cli/*.sh; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t")" "$build/$(basename "$t").log" sh "$t"
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
