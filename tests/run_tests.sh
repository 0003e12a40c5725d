#!/bin/sh
# Runs the fast test tier: every Check program given, then the CLI tests.
# Usage: tests/run_tests.sh BUILD_DIR TEST_BIN...
set -u
build=$1; shift
failed=0; passed=0
for t in "$@"; do
    if "$t" >"$build/$(basename "$t").log" 2>&1; then
        passed=$((passed + 1))
        printf 'PASS %s\n' "$(basename "$t")"
    else
        failed=$((failed + 1))
        printf 'FAIL %s\n' "$(basename "$t")"
        tail -n 30 "$build/$(basename "$t").log"
    fi
done
for t in tests/cli/*.sh; do
    [ -f "$t" ] || continue
    if sh "$t" >"$build/$(basename "$t").log" 2>&1; then
        passed=$((passed + 1))
        printf 'PASS %s\n' "$(basename "$t")"
    else
        failed=$((failed + 1))
        printf 'FAIL %s\n' "$(basename "$t")"
        tail -n 30 "$build/$(basename "$t").log"
    fi
done
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
