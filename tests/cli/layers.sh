#!/bin/sh
# layers.sh: the library/tool split and the layering (docs/DESIGN.md), checked
# on the built archives and on the sources.
#  1. No object of libplanner.a references getopt, printing to the standard
#     streams, or ending the process: nm lists no undefined getopt,
#     getopt_long, optarg/optind/opterr, printf, vprintf, puts, putchar, exit,
#     _exit, abort (or their fortified __*_chk forms), and no reference to the
#     stdout/stderr symbols.  Writing to a FILE* the caller passes is fine.
#  2. No link cycle: nothing libplanner.a needs is defined in libtool.a, so
#     "libtool.a libplanner.a" links left to right (the Makefile does that).
#  3. Every #include "layer/x.h" in src/L/*.c and include/L/*.h names a layer
#     at or below L in: base inputs model cost schedule partition search fit
#     out tool (tool may include every layer), and the headers include no
#     cycle.
# Usage: sh tests/cli/layers.sh [LIBDIR] (default: the directory of
# ./planner's target when it is a link, as in make sanitize, else build).
set -u
fail() { echo "FAIL: $*"; exit 1; }

if [ $# -ge 1 ]; then
    libdir=$1
elif [ -L ./planner ]; then
    libdir=$(dirname "$(readlink ./planner)")
else
    libdir=build
fi
lib=$libdir/libplanner.a
tool=$libdir/libtool.a
[ -f "$lib" ] && [ -f "$tool" ] || fail "no $lib or $tool (build first)"
command -v nm >/dev/null 2>&1 || { echo "SKIP layers.sh: nm (binutils) is not installed"; exit 77; }

# 1. forbidden references, per object
banned='^(getopt|getopt_long|getopt_long_only|optarg|optind|opterr|optopt|printf|vprintf|puts|putchar|putchar_unlocked|exit|_exit|_Exit|quick_exit|abort|stdout|stderr|__printf_chk|__vprintf_chk)$'
bad=$(nm -A -u "$lib" 2>/dev/null | awk -v re="$banned" '{ if ($NF ~ re) { o = $1; sub(/:$/, "", o); sub(/^.*:/, "", o); print o ": " $NF } }' |
      sort -u)
if [ -n "$bad" ]; then
    echo "$bad" | sed 's/^/  /'
    fail "library objects reference the tool's business (getopt, stdout/stderr, printing, exit)"
fi
nobj=$(nm -A -u "$lib" | awk -F: '{print $2}' | sort -u | wc -l)

# 2. no symbol the library needs comes from the tool
nm -g --defined-only "$tool" | awk 'NF == 3 { print $3 }' | sort -u >"${TMPDIR:-/tmp}/layers.$$.tool"
back=$(nm -u "$lib" | awk '{ print $NF }' | sort -u | comm -12 - "${TMPDIR:-/tmp}/layers.$$.tool")
rm -f "${TMPDIR:-/tmp}/layers.$$.tool"
[ -z "$back" ] || fail "libplanner.a calls into libtool.a (a link cycle): $(echo $back)"

# 3. includes go down the layers; no header cycle
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP layers.sh includes: python3 is not installed"
    echo "layers.sh: nm checks ok"
    exit 0
fi
python3 - <<'PY' || exit 1
import os, re, sys
order = "base inputs model cost schedule partition search fit out tool".split()
rank = {l: i for i, l in enumerate(order)}
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
bad, graph = [], {}
for top in ("src", "include"):
    for layer in sorted(os.listdir(top)):
        d = os.path.join(top, layer)
        if not os.path.isdir(d):
            continue
        if layer not in rank:
            bad.append(f"{d}: not a layer of {' '.join(order)}")
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            text = open(path, encoding="utf-8").read()
            deps = inc.findall(text)
            if top == "include":
                graph[f"{layer}/{name}"] = deps
            for dep in deps:
                parts = dep.split("/")
                if len(parts) != 2 or parts[0] not in rank:
                    bad.append(f'{path}: #include "{dep}" is not "layer/name.h"')
                elif not os.path.exists(os.path.join("include", dep)):
                    bad.append(f'{path}: #include "{dep}": no such header')
                elif layer != "tool" and rank[parts[0]] > rank[layer]:
                    bad.append(f'{path}: #include "{dep}": {layer} may not include {parts[0]} '
                               f'(a higher layer)')
# a cycle among the headers: depth-first search, grey = on the stack
state, stack = {}, []
def visit(h):
    state[h] = 1
    stack.append(h)
    for dep in graph.get(h, []):
        if state.get(dep) == 1:
            bad.append("include cycle: " + " -> ".join(stack[stack.index(dep):] + [dep]))
        elif dep in graph and dep not in state:
            visit(dep)
    stack.pop()
    state[h] = 2
for h in sorted(graph):
    if h not in state:
        visit(h)
for b in bad:
    print("  " + b)
if bad:
    print("FAIL: layering: %d problem(s)" % len(bad))
    sys.exit(1)
print("layers: %d headers, %d layers, includes go down, no cycle" % (len(graph), len(order)))
PY
# docs/DESIGN.md's table of layers names every source file of each library
# layer in that layer's row (tool/'s row lists the main ones and "...")
for dir in src/*/; do
    layer=$(basename "$dir")
    [ "$layer" = tool ] && continue
    row=$(grep "^| \`$layer\` |" docs/DESIGN.md | cut -d'|' -f3)
    [ -n "$row" ] || { echo "FAIL: docs/DESIGN.md has no row for layer $layer"; exit 1; }
    for f in "$dir"*.c; do
        name=$(basename "$f" .c)
        echo "$row" | grep -qw -- "$name" ||
            { echo "FAIL: docs/DESIGN.md's $layer row does not name $name ($f)"; exit 1; }
    done
done
echo "layers.sh: ok ($nobj library objects: no getopt/printf/exit/stdout/stderr; no call into libtool.a; DESIGN.md names every library file)"
