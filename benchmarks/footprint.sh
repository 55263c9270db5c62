#!/bin/bash
# The daemon's footprint after its first sync: threads by name, RSS and PSS, first-sync time (issue 27).
#
# Runs the daemon as the launcher does (nftproxy-jvm.sh's JVM flags and class-data archive, then NFTPROXY_JAVA_OPTS)
# as `nftproxy run --manifests DIR`
# in a throwaway network namespace (ip netns exec only; deleted on exit) with N ClusterIP Services x 2 endpoints and two
# LoadBalancer Services with externalTrafficPolicy Local (two health-check NodePort servers). A first run writes the
# class-data archive (into a temporary directory) and is not measured; the second is: the time from the launcher's
# start to "first sync done" in the log, then, WAIT seconds later, /proc/PID/task/*/comm, VmRSS, VmHWM and
# smaps_rollup's Pss. Needs root and a built jar (./mvnw -B -o -pl demo -am package -DskipTests).
#
#   benchmarks/footprint.sh [SERVICES=1000] [WAIT=10]     NFTPROXY_JAVA_OPTS='...' adds JVM flags as in production
#   INSPECT='jcmd $PID VM.native_memory summary' runs a command on the measured daemon before it stops
#   JAR=... measures another build (a copy of an older one, say) with the same script; JVM_SH=... another
#   nftproxy-jvm.sh (an older one: git show REV:systemd/src/main/dist/nftproxy-jvm.sh > /tmp/old-jvm.sh)
set -euo pipefail
N=${1:-1000}
WAIT=${2:-10}
cd "$(dirname "$0")/.."
JAR=${JAR:-proxy-daemon/target/nftproxy.jar}
[ -f "$JAR" ] || { echo "no $JAR: build it first" >&2; exit 2; }
JVM_SH=${JVM_SH:-systemd/src/main/dist/nftproxy-jvm.sh}
. "$JVM_SH"
NS=nftp-fp-$$
OUT=$(mktemp -d /tmp/nftp-fp.XXXXXX)
DIR=$OUT/manifests
export NFTPROXY_CDS_DIR=$OUT/cds
mkdir -p "$DIR"
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add fp0 type veth peer name fp1
ip -n "$NS" addr add 192.0.2.10/24 dev fp0
ip -n "$NS" link set fp0 up && ip -n "$NS" link set fp1 up

# Service i: 10.96.x.y, endpoints 10.200.x.y and 10.202.x.y (benchmarks/bench-services.sh), one file each.
. benchmarks/bench-services.sh
for ((i = 0; i < N; i++)); do bench_write_service "$DIR" "$i" 200; done
# The node, so that the health-check NodePorts (nodePortAddresses: primary) have its address to bind.
cat > "$DIR/node.yaml" <<YAML
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {addresses: [{type: InternalIP, address: 192.0.2.10}]}
YAML
for j in 1 2; do
    cat > "$DIR/lb-$j.yaml" <<YAML
apiVersion: v1
kind: Service
metadata: {name: lb-$j, namespace: bench}
spec:
  type: LoadBalancer
  clusterIP: 10.97.0.$j
  externalTrafficPolicy: Local
  healthCheckNodePort: $(( 32000 + j ))
  ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080, nodePort: $(( 31000 + j ))}]
status: {loadBalancer: {ingress: [{ip: 203.0.113.$j}]}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: lb-$j-1, namespace: bench, labels: {kubernetes.io/service-name: lb-$j}}
addressType: IPv4
ports: [{name: http, protocol: TCP, port: 8080}]
endpoints:
  - {addresses: [10.203.0.$j], nodeName: n1, conditions: {ready: true}}
YAML
done

# One run of the launcher; $1 = measure or not.
run() {
    local log=$OUT/daemon-$1.log start t
    : > "$log"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    ip netns exec "$NS" java $(nftproxy_jvm_flags "$JAR" run java) ${NFTPROXY_JAVA_OPTS:-} -cp "$JAR" io.nftproxy.cli.Main \
        run --manifests "$DIR" --hostname-override n1 \
        --healthz-bind-address 127.0.0.1:10256 --metrics-bind-address 127.0.0.1:10249 > "$log" 2>&1 &
    PID=$!
    for ((t = 0; t < 6000; t++)); do grep -q 'first sync done' "$log" && break; kill -0 "$PID" || { cat "$log"; exit 1; }; sleep 0.1; done
    grep -q 'first sync done' "$log" || { echo "no first sync in 600 s" >&2; exit 1; }
    local synced; synced=$(date +%s.%N)
    if [ "$1" = measure ]; then
        echo "# $N services x 2 + 2 health-check nodeports; NFTPROXY_JAVA_OPTS=${NFTPROXY_JAVA_OPTS:-}; load $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "launcher start -> first sync done: $(echo "$synced - $start" | bc) s"
        sleep "$WAIT"
        echo "java: $(tr '\0' ' ' < /proc/$PID/cmdline | cut -c1-400)"
        echo "threads: $(ls /proc/$PID/task | wc -l)"
        for t in /proc/$PID/task/*; do cat "$t/comm"; done | sed "s/[0-9][0-9]*$/N/" | sort | uniq -c | sort -rn | awk '{c=$1; $1=""; printf "  %2d %s\n", c, substr($0,2)}'
        echo "RSS $(awk '/VmRSS/ {print $2}' /proc/$PID/status) kB, peak (VmHWM) $(awk '/VmHWM/ {print $2}' /proc/$PID/status) kB, PSS $(awk '/^Pss:/ {print $2}' /proc/$PID/smaps_rollup) kB"
        echo "CPU (user+sys) $(awk '{printf "%.2f", ($14 + $15) / 100}' /proc/$PID/stat) s"
        if [ -n "${INSPECT:-}" ]; then PID=$PID sh -c "$INSPECT"; fi
    fi
    kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
}
run warm-up
run measure
echo "logs in $OUT"
