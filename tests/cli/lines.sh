#!/bin/sh
# lines.sh: no line of the C sources (src/, include/, tests/*.c and *.h) is
# longer than LIMIT characters (the house layout's 100 columns: what fits a
# side-by-side diff).  Characters, not bytes: a UTF-8 sequence counts as one.
# Prints every offender as FILE:LINE: N characters, in file order.
# Usage: sh tests/cli/lines.sh [LIMIT] (default 100); run from the repository
# root (src and include may be links, as in make sanitize's tree of links).
set -u
limit=${1:-100}
for d in src include; do
    [ -d "$d" ] || { echo "FAIL: no directory $d"; exit 1; }
done
files=$( (find -H src include -name '*.[ch]'; ls tests/*.c tests/*.h 2>/dev/null) | sort)
[ -n "$files" ] || { echo "FAIL: no C source found"; exit 1; }
n=$(echo "$files" | wc -l)
# awk under the C locale sees bytes: UTF-8 continuation bytes (0x80-0xbf)
# are dropped before counting, so each character counts once.
# shellcheck disable=SC2086
bad=$(LC_ALL=C awk -v limit="$limit" '
    { s = $0; sub(/\r$/, "", s); gsub(/[\200-\277]/, "", s)
      if (length(s) > limit) printf "%s:%d: %d characters\n", FILENAME, FNR, length(s) }' $files)
if [ -n "$bad" ]; then
    echo "$bad" | sed 's/^/  /'
    echo "FAIL: $(echo "$bad" | wc -l) line(s) over $limit characters: wrap them"
    exit 1
fi
echo "lines.sh: ok ($n files, no line over $limit characters)"
