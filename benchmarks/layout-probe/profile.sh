#!/bin/bash
# Where the kernel spends one change: loads gen.py's table in a fresh namespace, applies gen.py's changes in order
# and records `perf` (call graphs) over each change of the given kind only. Prints, over all those samples, the
# kernel functions by share of samples spent in them (self) and by share of samples they are on the stack of
# (total, callees included). Needs root and perf; never touches the root namespace.
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
echo "# $layout $services x $per, kind $kind, load average $(cut -d' ' -f1-3 /proc/loadavg)"
k=0
for f in "$work"/change-*.nft; do
    if [[ $f == *-"$kind".nft ]]; then
        k=$((k + 1))
        perf record -q -g -o "$work/perf-$k.data" -- ip netns exec "$ns" nft -f "$f" 2>/dev/null
    else
        ip netns exec "$ns" nft -f "$f"
    fi
done
for d in "$work"/perf-*.data; do perf script -i "$d" -F comm,ip,sym 2>/dev/null; done > "$work/samples.txt"
# a sample is a header line (the command) followed by its frames, leaf first, and a blank line
awk '
    /^[^ \t]/ { n++; leaf = 1; delete seen; next }
    /^[ \t]+[0-9a-f]+ / { sym = $2; sub(/\+0x.*/, "", sym)
        if (leaf) { self[sym]++; leaf = 0 }
        if (!(sym in seen)) { seen[sym] = 1; total[sym]++ } }
    END {
        printf "%d samples\n-- self --\n", n
        for (s in self) printf "%6.2f%%  %s\n", 100 * self[s] / n, s | "sort -rn | head -12"
        close("sort -rn | head -12")
        printf "-- total (nf_tables / nfnetlink functions) --\n"
        for (s in total) if (s ~ /^(nf_tables|nft_|nfnetlink|__nft)/) printf "%6.2f%%  %s\n", 100 * total[s] / n, s | "sort -rn | head -12"
    }' "$work/samples.txt"
