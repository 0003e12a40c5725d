#!/bin/sh
# readme.sh: every example command of README.md runs as written from a fresh
# clone and exits as the README says, and prints what the README shows after
# it; the README's example input files (```json, ```yaml) load.
#
# The examples are the lines of the README's ```sh blocks that start with
# "./planner " (a line ending in "\" continues on the next).  A command whose
# line ends in "# exit N" must exit N; any other must exit 0.  A command that
# names ../shared is skipped (with a SKIP line) when ../shared is absent, as the
# README says, and so are the commands after it in its block (they may read
# what it wrote).  `make` lines of those blocks are the set-up commands, which the
# test suite itself is run by: they are not re-run here.  Any other line in a
# ```sh block (a bare `planner` that is not on PATH, a file the clone does not
# have) is an error of the README.
#
# The commands run in a scratch copy of the shipped inputs (configs/,
# clusters/, docs/) with ./planner the built binary and ../shared the real one
# (when present), so their output files land in the copy.
set -u
top=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x ./planner ] || fail "./planner not built"

# 1. extract: one "BLOCK<TAB>EXPECTED<TAB>COMMAND" line per example, or
# "BAD<TAB>LINE"; a ```text block that follows a ```sh block with only blank
# lines between is what that block's last command prints: saved as
# $T/text.BLOCK (checked in 3)
awk -v dir="$T" '
    intext && /^```$/ { intext = 0; next }
    intext { print > (dir "/text." textfor); next }
    /^```/ {
        if (inblock) { inblock = 0; after = block; next }
        if ($0 == "```text" && after > 0) { intext = 1; textfor = after; after = 0; next }
        after = 0
        inblock = ($0 == "```sh"); block += inblock; next
    }
    !inblock { if ($0 !~ /^[ \t]*$/) after = 0; next }
    {
        line = $0
        if (cont != "") { cmd = cont " " line; cont = "" }
        else cmd = line
        if (cmd ~ /\\$/) { sub(/[ \t]*\\$/, "", cmd); cont = cmd; next }
        if (cmd ~ /^[ \t]*$/ || cmd ~ /^[ \t]*#/) next
        if (cmd ~ /^make( |$)/) next
        if (cmd !~ /^\.\/planner /) { printf "BAD\t%s\n", cmd; next }
        want = 0
        if (match(cmd, /[ \t]#[ \t]*exit [0-9]+[ \t]*$/)) {
            c = substr(cmd, RSTART); sub(/^[ \t]*#[ \t]*exit /, "", c); want = c + 0
        }
        sub(/[ \t]+#.*$/, "", cmd)
        printf "%d\t%d\t%s\n", block, want, cmd
    }
' README.md > "$T/examples" || fail "cannot read README.md"
if grep -q '^BAD' "$T/examples"; then
    grep '^BAD' "$T/examples" | cut -f2- | sed 's/^/  not an example of .\/planner: /'
    fail 'README.md: lines of ```sh blocks that are not ./planner commands'
fi
n=$(wc -l < "$T/examples")
# the README walks through the main job, --show-inputs, --emit, traces,
# sweeps, validate and calibrate: far more than 10 examples
[ "$n" -ge 10 ] || fail "only $n examples found in README.md (extraction broken?)"

# 2. a scratch clone: shipped inputs copied, the binary and ../shared linked
mkdir "$T/clone"
for d in configs clusters docs; do cp -RL "$d" "$T/clone/$d" || fail "copy $d"; done
ln -s "$top/planner" "$T/clone/planner"
shared=${PLANNER_SHARED:-../shared}
have_shared=0
if [ -d "$shared" ]; then
    ln -s "$(cd "$shared" && pwd)" "$T/shared"
    have_shared=1
fi

# 3. run each; where a ```text block shows what a block's last command
# prints, every line of it but "..." is a line of that output (stdout and
# stderr; the search's time and rate masked, as in 4)
mask() { sed -E 's/\), [0-9.]+ s, [0-9,]+ candidates\/s$/), T s, R candidates\/s/' "$1"; }
excerpt_bad() {   # BLOCK: the lines of $T/text.BLOCK missing from $T/out + $T/err
    cat "$T/out" "$T/err" > "$T/both"
    mask "$T/both" > "$T/both_masked"
    mask "$T/text.$1" | while IFS= read -r line; do
        case $line in ''|...|'  ...') continue ;; esac
        grep -qxF -- "$line" "$T/both_masked" || printf '    %s\n' "$line"
    done
}
ran=0; skipped=0; bad=0; skip_block=0; shown=0
while IFS="$(printf '\t')" read -r block want cmd; do
    case $cmd in
    *../shared*) [ $have_shared -eq 0 ] && skip_block=$block ;;
    esac
    if [ "$skip_block" -eq "$block" ]; then
        echo "SKIP readme.sh '$cmd': ../shared absent"
        skipped=$((skipped + 1))
        continue
    fi
    (cd "$T/clone" && eval "$cmd") > "$T/out" 2> "$T/err" < /dev/null
    rc=$?
    ran=$((ran + 1))
    if [ $rc -ne "$want" ]; then
        echo "README example exits $rc, README says $want: $cmd"
        head -n 5 "$T/err"
        bad=$((bad + 1))
    elif [ "$want" -eq 0 ] && [ ! -s "$T/out" ] && ! echo "$cmd" | grep -q -- ' -o '; then
        echo "README example printed nothing: $cmd"
        bad=$((bad + 1))
    elif [ -f "$T/text.$block" ] &&
         [ "$(awk -F'\t' -v b="$block" '$1 == b { c = $3 } END { print c }' "$T/examples")" \
           = "$cmd" ]; then
        excerpt_bad "$block" > "$T/missing"
        shown=$((shown + 1))
        if [ -s "$T/missing" ]; then
            echo "README shows lines that '$cmd' does not print (update the block):"
            head -n 10 "$T/missing"
            bad=$((bad + 1))
        fi
    fi
done < "$T/examples"
[ $bad -eq 0 ] || fail "$bad of $ran README examples do not run (or print) as written"

# 4. the walk-through's output is the tool's: the ```text block after the
# main job's command (section "example") is what that command prints, but
# for the search's time and rate (machine-dependent: masked on both sides)
awk '/^<!-- section: example -->/ { f = 1 }
     f && /^```text$/ { p = 1; next }
     p && /^```$/ { exit }
     p' README.md > "$T/readme_main"
[ -s "$T/readme_main" ] || fail "README.md: no output block after the main job"
./planner --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml > "$T/main_out" ||
    fail "the main job failed"
mask "$T/readme_main" > "$T/a"
mask "$T/main_out" > "$T/b"
if ! diff -u "$T/a" "$T/b" > "$T/main_diff"; then
    head -n 40 "$T/main_diff"
    fail "README.md's main-job output is not what ./planner prints (update the block from the command)"
fi

# 5. the validation summary the README shows is what validate prints on the
# public corpus (its last lines: the subset table), when ../shared is here
awk '/^<!-- section: validation -->/ { f = 1 }
     f && /^```text$/ { p = 1; next }
     p && /^```$/ { exit }
     p' README.md > "$T/readme_validate"
[ -s "$T/readme_validate" ] || fail "README.md: no output block in the validation section"
if [ $have_shared -eq 1 ]; then
    ./planner validate "$shared/validation/published-runs.json" > "$T/validate_out" ||
        fail "validate on ../shared failed"
    tail -n "$(wc -l < "$T/readme_validate")" "$T/validate_out" > "$T/validate_tail"
    if ! diff -u "$T/readme_validate" "$T/validate_tail"; then
        fail "README.md's validation summary is not what ./planner validate prints (update the block)"
    fi
    summary="the main job's and validate's outputs match"
else
    echo "SKIP readme.sh validation summary: ../shared absent"
    summary="the main job's output matches (validate's: skipped)"
fi
# 6. the example inputs a user copies: each ```json block is a model and
# each ```yaml block a cluster the planner reads (--show-inputs, exit 0)
for kind in json yaml; do
    awk -v kind="$kind" -v dir="$T" '
        in_b && /^```$/ { in_b = 0; next }
        in_b { print > (dir "/input." n "." kind); next }
        $0 == "```" kind { in_b = 1; n++ }' README.md
done
inputs=0
for f in "$T"/input.*; do
    [ -f "$f" ] || continue
    case $f in
    *.json) set -- --model "$f" --cluster clusters/h100x512.yaml ;;
    *) set -- --model configs/llama3-8b.json --cluster "$f" ;;
    esac
    ./planner "$@" --show-inputs > /dev/null 2> "$T/err" ||
        fail "README.md's example ${f##*.} input does not load: $(cat "$T/err")"
    inputs=$((inputs + 1))
done
[ $inputs -ge 2 ] || fail "README.md: found $inputs example inputs (extraction broken?)"

echo "readme.sh: $ran examples ran as the README says ($shown with the output shown)," \
    "$skipped skipped; $summary; $inputs example inputs load"
