#!/bin/bash
# Where the kernel spends one change: loads gen.py's table in a fresh namespace, then records `perf` (kernel call
# graphs, whole system, while only that `nft -f` runs in it) over each change script of the given kind, and prints
# the hottest kernel symbols (self and children). Needs root and perf; never touches the root namespace.
# Usage: benchmarks/layout-probe/profile.sh LAYOUT SERVICES ENDPOINTS KIND [CHANGES=10]
set -euo pipefail
layout=${1:?usage: profile.sh LAYOUT SERVICES ENDPOINTS KIND [CHANGES]}
services=${2:?}; per=${3:?}; kind=${4:?}; changes=${5:-10}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/nftp-layout-profile.XXXXXX)
ns=nftp-flat-prof-$$
cleanup() { ip netns delete "$ns" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
python3 "$here/gen.py" "$layout" "$services" "$per" "$changes" "$work"
ip netns add "$ns"
ip netns exec "$ns" nft -f "$work/full.nft"
# every change before the first of KIND is applied unprofiled, so the table is in the state gen.py assumed
files=("$work"/change-*.nft)
script=$work/changes.sh
: > "$script"
for f in "${files[@]}"; do
    if [[ $f == *-"$kind".nft ]]; then
        echo "ip netns exec $ns nft -f $f" >> "$script"
    else
        echo "ip netns exec $ns nft -f $f >/dev/null" >> "$script"
    fi
done
echo "# $layout $services x $per, kind $kind, load average $(cut -d' ' -f1-3 /proc/loadavg)"
perf record -q -o "$work/perf.data" -g -- bash "$script" 2>/dev/null
perf report -i "$work/perf.data" --no-children -g none --sort symbol --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -15
echo "# with children"
perf report -i "$work/perf.data" --children -g none --sort symbol --stdio 2>/dev/null | grep -E '\[k\] (nf_tables|nft_|nfnetlink)' | head -12
