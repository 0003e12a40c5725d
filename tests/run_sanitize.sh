#!/bin/sh
# Runs the fast tier's tests from a sanitizer build (make sanitize).
# Usage: tests/run_sanitize.sh BUILD_DIR TEST_BIN...
#
# The CLI tests call ./planner from the repository root; so that they exercise
# the sanitized binary without touching the shared ./planner, they run in
# BUILD_DIR/root: a tree of links to the repository's top-level entries whose
# ./planner is BUILD_DIR/planner (and BUILD_DIR/shared links ../shared, so
# tests that look for ../shared still find it).
#
# Sanitizer settings: every ASan/UBSan/LSan report is fatal (exit 23 or the
# test's failure); no suppressions are needed (libcheck, jansson, libyaml,
# OpenBLAS and GLPK report nothing).  CK_TIMEOUT_MULTIPLIER gives Check's
# per-test timeout room for the ~2-3x slowdown.
set -eu
build=$1; shift
top=$(pwd)
case $build in /*) ;; *) build=$top/$build ;; esac
root=$build/root
rm -rf "$root"
mkdir -p "$root"
for f in * .[!.]*; do
    [ -e "$f" ] || continue
    case $f in planner|build|build-san|build-fuzz|.git) continue ;; esac
    ln -s "$top/$f" "$root/$f"
done
ln -s "$build/planner" "$root/planner"
rm -f "$build/shared"
if [ -d "$top/../shared" ]; then
    ln -s "$(cd "$top/../shared" && pwd)" "$build/shared"
fi

ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=23
LSAN_OPTIONS=exitcode=23
CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-4}
OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS CK_TIMEOUT_MULTIPLIER OPENBLAS_NUM_THREADS

bins=""
for t in "$@"; do
    case $t in /*) bins="$bins $t" ;; *) bins="$bins $top/$t" ;; esac
done
cd "$root"
# shellcheck disable=SC2086
exec sh "$top/tests/run_tests.sh" "$build" $bins
