#!/bin/sh
# CLI basics: --help and --version exit 0 on stdout for every subcommand; an
# unknown option is a usage error (2) on stderr.
set -u
P=${PLANNER:-./planner}
fail=0
check() {   # check EXPECTED_STATUS DESCRIPTION CMD...
    want=$1; what=$2; shift 2
    "$@" >/tmp/planner-main.$$.out 2>/tmp/planner-main.$$.err
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want"; fail=1
    fi
}
check 0 "planner --help" "$P" --help
grep -q "^Usage: planner" /tmp/planner-main.$$.out || { echo "FAIL: --help has no usage line"; fail=1; }
grep -q "70  internal error" /tmp/planner-main.$$.out || { echo "FAIL: --help lacks the exit-code table"; fail=1; }
check 0 "planner --version" "$P" --version
grep -q "^planner [0-9]" /tmp/planner-main.$$.out || { echo "FAIL: --version output"; fail=1; }
grep -q "^License GPL-3.0-or-later" /tmp/planner-main.$$.out || { echo "FAIL: --version licence"; fail=1; }
# the subcommands, from the second usage line: "planner size|validate|... ..."
subs=$("$P" --help | sed -n 's/^ *planner \([a-z|]*\) \.\.\..*/\1/p' | tr '|' ' ')
for cmd in size validate sweep calibrate crossval; do
    case " $subs " in
        *" $cmd "*) ;;
        *) echo "FAIL: --help's usage lacks $cmd ($subs)"; fail=1;;
    esac
done
for cmd in "" $subs; do
    check 0 "planner $cmd --help" "$P" $cmd --help
    # no line wider than 100 columns but a folder's own ("Shipped models (in DIR):")
    long=$(grep -v '(in .*):$' /tmp/planner-main.$$.out | awk 'length > 100' | cut -c1-60)
    [ -z "$long" ] || { echo "FAIL: planner $cmd --help: lines over 100 columns: $long"; fail=1; }
done
# a usage error's hint names the subcommand, one space on each side
for cmd in "" plan $subs; do
    check 2 "planner $cmd --bogus" "$P" $cmd --bogus
    hint="planner ${cmd:+$cmd }--help"
    [ "$cmd" = plan ] && hint="planner --help"   # plan is the main command
    grep -qx "Try '$hint' for more information." /tmp/planner-main.$$.err ||
        { echo "FAIL: planner $cmd --bogus: hint $(tail -n 1 /tmp/planner-main.$$.err)"
          fail=1; }
done
# ... a bad value of an option the subcommands share (the time-to-train ones)
for cmd in "" size sweep; do
    check 2 "planner $cmd --tokens -5" "$P" $cmd -m configs/llama3-8b.json \
        -c clusters/h200x64.yaml --tokens -5
    grep -qx "Try 'planner ${cmd:+$cmd }--help' for more information." /tmp/planner-main.$$.err ||
        { echo "FAIL: planner $cmd --tokens -5: hint $(tail -n 1 /tmp/planner-main.$$.err)"
          fail=1; }
done
check 2 "unknown option" "$P" --bogus
grep -q "^planner: unknown option '--bogus'" /tmp/planner-main.$$.err || { echo "FAIL: unknown option message"; fail=1; }
check 2 "missing --cluster" "$P" --model configs/gpt3-175b.json
check 2 "bad --top" "$P" --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml --top 0
# scripts/deps.sh as a user, every package missing (id and dpkg-query
# stubbed): the exact apt-get line to run as root, no sudo (minimal Debian)
stub=/tmp/planner-main.$$.stub
mkdir -p "$stub"
printf '#!/bin/sh\necho 1000\n' > "$stub/id"
printf '#!/bin/sh\nexit 1\n' > "$stub/dpkg-query"
chmod +x "$stub/id" "$stub/dpkg-query"
PATH="$stub:$PATH" sh scripts/deps.sh 2> /tmp/planner-main.$$.err
[ $? -eq 1 ] || { echo "FAIL: deps.sh as a user: exit $?, expected 1"; fail=1; }
grep -qx '    apt-get update && apt-get install -y libglpk-dev .*python3' /tmp/planner-main.$$.err ||
    { echo "FAIL: deps.sh: no apt-get line: $(cat /tmp/planner-main.$$.err)"; fail=1; }
grep -q sudo /tmp/planner-main.$$.err && { echo "FAIL: deps.sh suggests sudo"; fail=1; }
rm -rf "$stub"
rm -f /tmp/planner-main.$$.out /tmp/planner-main.$$.err
[ "$fail" -eq 0 ] && echo "main.sh: ok"
exit "$fail"
