#!/bin/bash
# The kernel's side of each part of a cut cold start: `nft -f PART` under `strace -T` in a fresh namespace, in
# commit order, and the longest batch sendmsg of each part (the nfnetlink batch runs under the commit lock
# while that call is in the kernel). Parts come from ColdStartParts -Dbench.writeParts=DIR. Needs root.
# Usage: benchmarks/part-sendmsg.sh DIR/budget-B
set -euo pipefail
dir=${1:?usage: part-sendmsg.sh DIR/budget-B}
ns=nftp-psm-$$
ip netns add "$ns"
trap 'ip netns delete "$ns"' EXIT
out=$(mktemp)
for f in "$dir"/part-*.nft; do
    ip netns exec "$ns" strace -T -e trace=sendmsg -o "$out" nft -f "$f"
    # the batch is the sendmsg with the most bytes; its time is between the angle brackets
    awk -F'[<>]' '/sendmsg/ { t = $(NF-1) + 0; if (t > max) max = t } END { printf "%.1f\n", max * 1000 }' "$out"
done > "$dir/sendmsg-ms.txt"
rm -f "$out"
sort -n "$dir/sendmsg-ms.txt" | awk '{ a[NR] = $1; s += $1 } END { p99 = a[int(NR * 0.99 + 0.999)]; printf "parts %d, sum %.0f ms, p50 %.1f / p99 %.1f / max %.1f ms (longest sendmsg per part)\n", NR, s, a[int(NR / 2 + 0.5)], p99, a[NR] }'
