#!/bin/sh
# Installs the Debian packages planner needs, if any is missing.
# As root it runs apt-get; otherwise it prints the exact commands to run as
# root (a minimal Debian has no sudo) and fails.
set -u
PKGS="libglpk-dev libjansson-dev libyaml-dev check libopenblas-dev liblapacke-dev pkg-config python3"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "planner: installing missing packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq $missing >&2 || {
        echo "planner: apt-get failed; install by hand: apt-get install$missing" >&2
        exit 1
    }
else
    echo "planner: missing packages:$missing; as root, run:" >&2
    echo "    apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
