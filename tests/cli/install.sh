#!/bin/sh
# `make install PREFIX=...` installs configs/ and clusters/ under
# PREFIX/share/planner, and the installed binary takes a shipped name
# (--model gpt3-175b --cluster h100x512) from any directory; --help lists
# the names.  Run from the repository root.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
make -s install PREFIX="$T/p" > "$T/log" 2>&1 || fail "make install: $(cat "$T/log")"
[ -f "$T/p/share/planner/configs/gpt3-175b.json" ] || fail "configs not installed"
[ -f "$T/p/share/planner/clusters/h100x512.yaml" ] || fail "clusters not installed"
(cd "$T" && ./p/bin/planner --model gpt3-175b --cluster h100x512 --show-inputs > out 2> err) ||
    fail "shipped names from another directory: $(cat "$T/err")"
grep -q '^Model gpt3-175b (planner JSON)' "$T/out" || fail "gpt3-175b by name"
"$T/p/bin/planner" --help |
    sed -n '/^Shipped models (in .*share\/planner\/configs):$/,/^Shipped clusters/p' |
    grep -q '^  .*gpt3-175b' ||
    fail "--help does not list the installed models"
(cd "$T" && ./p/bin/planner --model no-such-model --cluster h100x512 --show-inputs 2> err)
[ $? -eq 4 ] || fail "unknown name: expected exit 4"
echo "install.sh: ok"
