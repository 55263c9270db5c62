#!/bin/bash
# Kernel cost of single changes in each candidate dispatch layout (gen.py): per layout, a fresh network namespace,
# the full table loaded with `nft -f`, then each change script under `strace -T -e trace=sendmsg,recvmsg`.
# Per change it records the longest sendmsg (the nfnetlink batch: processed, validated and committed by the kernel
# inside that call, under the commit lock), the sum of recvmsg (nft reading its cache: the table listing) and the
# wall time of the whole `nft -f`. Prints p50 / p99 / max per kind. Needs root; never touches the root namespace.
# Usage: benchmarks/layout-probe/run.sh SERVICES ENDPOINTS [CHANGES_PER_KIND=20] [LAYOUTS="fast flatgoto flat"]
# (layouts: gen.py fast, flatgoto, flat, flatlean, flatset, flatvmap)
set -euo pipefail
services=${1:?usage: run.sh SERVICES ENDPOINTS [CHANGES_PER_KIND] [LAYOUTS]}
per=${2:?usage: run.sh SERVICES ENDPOINTS [CHANGES_PER_KIND] [LAYOUTS]}
changes=${3:-20}
layouts=${4:-fast flatgoto flat}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/nftp-layout-probe.XXXXXX)
ns=nftp-flat-$$
cleanup() { ip netns delete "$ns" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
stats() { # stdin: one number per line -> "p50 / p99 / max"
    sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) { print "-"; exit }
        i = int(NR * 0.99 + 0.999); if (i > NR) i = NR; m = int(NR / 2 + 0.5); if (m < 1) m = 1
        printf "%.1f / %.1f / %.1f", a[m], a[i], a[NR] }'
}
echo "# $services services x $per endpoints, $changes changes per kind, kernel $(uname -r), $(nft --version)"
for layout in $layouts; do
    dir=$work/$layout
    python3 "$here/gen.py" "$layout" "$services" "$per" "$changes" "$dir"
    ip netns add "$ns"
    echo "## $layout: $(grep -c . "$dir/full.nft") commands in the full table; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    start=$(date +%s%N)
    ip netns exec "$ns" nft -f "$dir/full.nft"
    echo "full load: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    : > "$dir/results.txt"
    for f in "$dir"/change-*.nft; do
        kind=$(basename "$f" .nft | cut -d- -f3-)
        start=$(date +%s%N)
        ip netns exec "$ns" strace -T -e trace=sendmsg,recvmsg -o "$dir/strace.out" nft -f "$f"
        wall=$(( ($(date +%s%N) - start) / 1000 ))
        awk -F'[<>]' -v kind="$kind" -v wall="$wall" '
            /^sendmsg/ { t = $(NF-1) * 1000; if (t > s) s = t }
            /^recvmsg/ { r += $(NF-1) * 1000 }
            END { printf "%s %.2f %.2f %.2f\n", kind, s, r, wall / 1000 }' "$dir/strace.out" >> "$dir/results.txt"
    done
    printf "%-16s %-26s %-26s %s\n" "change" "batch sendmsg ms" "recvmsg sum ms" "nft -f wall ms (p50 / p99 / max)"
    for kind in $(awk '{ print $1 }' "$dir/results.txt" | awk '!seen[$0]++'); do
        printf "%-16s %-26s %-26s %s\n" "$kind" \
            "$(awk -v k="$kind" '$1 == k { print $2 }' "$dir/results.txt" | stats)" \
            "$(awk -v k="$kind" '$1 == k { print $3 }' "$dir/results.txt" | stats)" \
            "$(awk -v k="$kind" '$1 == k { print $4 }' "$dir/results.txt" | stats)"
    done
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    ip netns delete "$ns"
done
