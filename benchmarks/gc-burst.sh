#!/bin/bash
# GC pauses of the daemon during a burst of changes (issue 11 target: p99 <= 10 ms during 1,000 changes).
#
# Runs `nftproxy run --manifests DIR` in a throwaway network namespace (ip netns exec only; deleted on exit) with the
# launcher's JVM flags plus GC logging, N ClusterIP Services x 2 endpoints (one file each, Service + EndpointSlice),
# waits for the first sync, then rewrites C of the files (each slice gets a new endpoint address) as fast as the
# shell can, waits until the kernel holds every new address, and prints the pauses logged in between; ROUNDS such
# bursts one after the other, each reported alone and then together.
# Needs root and a built jar: ./mvnw -B -o -pl proxy-daemon -am package -DskipTests
#
#   benchmarks/gc-burst.sh [SERVICES=5000] [CHANGES=1000] [ROUNDS=1]     JVM_FLAGS='...' overrides the launcher's flags
#   JAR=... measures another build (an older one, say) with the same script
set -euo pipefail
N=${1:-5000}
C=${2:-1000}
R=${3:-1}
[ "$R" -ge 1 ] && [ "$R" -le 50 ] || { echo "ROUNDS must be 1..50" >&2; exit 2; }
cd "$(dirname "$0")/.."
JAR=${JAR:-proxy-daemon/target/nftproxy.jar}
[ -f "$JAR" ] || { echo "no $JAR: build it first" >&2; exit 2; }
. systemd/src/main/dist/nftproxy-jvm.sh
FLAGS=${JVM_FLAGS:-$(NFTPROXY_NO_CDS=1 nftproxy_jvm_flags "$JAR" run)}
NS=nftp-gc-$$
OUT=$(mktemp -d /tmp/nftp-gc.XXXXXX)
DIR=$OUT/manifests
mkdir -p "$DIR"
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up

# Service i: 10.96.x.y; endpoints 10.200.x.y and, after the burst, 10.201.x.y (benchmarks/bench-services.sh).
. benchmarks/bench-services.sh
write() { bench_write_service "$DIR" "$1" "$2"; }
for ((i = 0; i < N; i++)); do write "$i" 200; done

echo "# $N services x 2, burst of $C changes; JVM flags: $FLAGS; load $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
ip netns exec "$NS" java $FLAGS -Xlog:gc*:file="$OUT/gc.log":uptime,level,tags -jar "$JAR" run --manifests "$DIR" \
    --hostname-override n1 --healthz-bind-address 127.0.0.1:10256 --metrics-bind-address 127.0.0.1:10249 > "$OUT/daemon.log" 2>&1 &
PID=$!
for ((t = 0; t < 600; t++)); do grep -q 'first sync done' "$OUT/daemon.log" && break; kill -0 "$PID" || { cat "$OUT/daemon.log"; exit 1; }; sleep 1; done
grep -q 'first sync done' "$OUT/daemon.log" || { echo "no first sync in 600 s" >&2; exit 1; }
sleep 5
# The pauses logged from line $1 of gc.log on, with their statistics; $2 names them.
report() {
    tail -n +"$1" "$OUT/gc.log" > "$OUT/gc-part.log"
    grep -o 'Pause.*ms$' "$OUT/gc-part.log" | sed 's/.* \([0-9.]*\)ms$/\1/' | sort -n > "$OUT/pauses.txt" || true
    local k
    k=$(wc -l < "$OUT/pauses.txt")
    if [ "$k" -gt 0 ]; then
        p() { sed -n "$(( ($1 * k + 99) / 100 ))p" "$OUT/pauses.txt"; }
        echo "pauses $2: $k, p50 $(p 50) ms, p99 $(p 99) ms, max $(tail -1 "$OUT/pauses.txt") ms; full collections: $(grep -c 'Pause Full.*ms$' "$OUT/gc-part.log" || true); over 10 ms: $(awk '$1 > 10' "$OUT/pauses.txt" | wc -l); total paused $(awk '{s += $1} END {print s}' "$OUT/pauses.txt") ms"
        echo "heap at the last pause (before->after(committed)): $(grep 'Pause.*ms$' "$OUT/gc-part.log" | tail -1 | grep -o '[0-9]*M->[0-9]*M([0-9]*M)' || true)"
    else
        echo "pauses $2: none"
    fi
}
# Round r gives every rewritten slice the endpoint 10.O.x.y, O = 201 for the first round, then 203, 204, ...
first=$(( $(wc -l < "$OUT/gc.log") + 1 ))
for ((r = 1; r <= R; r++)); do
    oct=$(( r == 1 ? 201 : 201 + r ))
    before=$(( $(wc -l < "$OUT/gc.log") + 1 ))
    [ "$r" -eq 2 ] && second=$before
    start=$(date +%s.%N)
    for ((i = 0; i < C; i++)); do write "$i" "$oct"; done
    written=$(date +%s.%N)
    for ((t = 0; t < 600; t++)); do
        # A chain's "dnat to 10.O.x.y" (fast, upstream) or a flat map's ": 10.O.x.y . 8080" (flat, the default).
        n=$(ip netns exec "$NS" nft list table ip kube-proxy | { grep -oE "(dnat to |: )10\.$oct\." || true; } | wc -l)
        [ "$n" -ge "$C" ] && break
        sleep 1
    done
    done_at=$(date +%s.%N)
    echo "round $r: files written in $(echo "$written - $start" | bc) s; all $n changes in the kernel after $(echo "$done_at - $start" | bc) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
    report "$before" "during burst $r"
done
if [ "$R" -gt 1 ]; then
    report "$first" "during all $R bursts"
    report "$second" "during bursts 2-$R (the first young collection after the start is in burst 1)"
fi
# PSS as well: ZGC maps its heap three times, so RSS counts it thrice while the memory used is the same.
echo "daemon RSS: $(grep VmRSS /proc/$PID/status | awk '{print $2 " kB"}'), peak $(grep VmHWM /proc/$PID/status | awk '{print $2 " kB"}'), PSS $(awk '/^Pss:/ {print $2 " kB"}' /proc/$PID/smaps_rollup)"
echo "logs in $OUT"
