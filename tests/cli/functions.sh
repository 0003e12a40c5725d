#!/bin/sh
# functions.sh: no function in src/ is longer than LIMIT lines (docs/DESIGN.md,
# "Files": functions a reader can hold in their head).  A function's length is
# the number of lines strictly between its opening '{' and its closing '}',
# both at column 0 (the house layout: the signature's lines, then '{' alone).
# Prints every offender as FILE:LINE: NAME: N lines, longest first.
# Usage: sh tests/cli/functions.sh [LIMIT [DIR]] (default 100, src; DIR may be a
# link, as in make sanitize's tree of links).
set -u
limit=${1:-100}
dir=${2:-src}
[ -d "$dir" ] || { echo "FAIL: no directory $dir"; exit 1; }
files=$(find -H "$dir" -name '*.c' | sort)
[ -n "$files" ] || { echo "FAIL: no .c file under $dir"; exit 1; }
# awk: remember the last line that opens a signature (a name at column 0
# followed by '('), measure from a column-0 '{' to the next column-0 '}'.
report=$(for f in $files; do
    awk -v f="$f" -v limit="$limit" '
        /^[A-Za-z_].*\(/ { sig = $0; sig_line = FNR }
        /^\{/ { start = FNR; name = sig; at = sig_line; n_fn++ }
        /^\}/ && start {
            n = FNR - start - 1
            if (n > limit) {
                sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
                printf "%d %s:%d: %s: %d lines\n", n, f, at, name, n
            }
            start = 0
        }
        END { printf "# %d\n", n_fn }' "$f"
done)
count=$(echo "$report" | awk '/^# / { s += $2 } END { print s + 0 }')
bad=$(echo "$report" | grep -v '^# ' | sort -rn | cut -d' ' -f2-)
[ "$count" -gt 0 ] || { echo "FAIL: no function found under $dir (is the layout still '{' at column 0?)"; exit 1; }
if [ -n "$bad" ]; then
    echo "$bad" | sed 's/^/  /'
    echo "FAIL: $(echo "$bad" | wc -l) function(s) in $dir over $limit lines: split them along their seams"
    exit 1
fi
echo "functions.sh: ok ($count functions in $dir, none over $limit lines)"
