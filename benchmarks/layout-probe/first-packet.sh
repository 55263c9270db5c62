#!/bin/bash
# First-packet cost of the flat dispatch against fast: loopback connects through a ClusterIP whose service port
# has 2 or 16 endpoints, alternating the tables, in a fresh namespace (everything on its loopback). A Python client,
# so the absolute times include the interpreter; compare the layouts with each other. Needs root.
# Usage: benchmarks/layout-probe/first-packet.sh [CONNECTS=10000] [ROUNDS=3]
set -euo pipefail
connects=${1:-10000}; rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)/first-packet
work=$(mktemp -d /tmp/nftp-first-packet.XXXXXX)
ns=nftp-flat-fp-$$
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; ip netns delete "$ns" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
python3 "$here/tables.py" "$work"
ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
for k in $(seq 1 16); do ip netns exec "$ns" ip addr add "10.0.1.$k/32" dev lo; done
ip netns exec "$ns" ip addr add 10.0.0.9/32 dev lo
ip netns exec "$ns" ip route add 172.16.0.0/12 dev lo src 10.0.0.9
ip netns exec "$ns" sysctl -qw net.ipv4.tcp_tw_reuse=1
ip netns exec "$ns" python3 "$here/server.py" > /dev/null & server=$!
sleep 1
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
    for t in fast-2 flat-2 fast-16 flat-16; do
        ip netns exec "$ns" nft flush ruleset
        ip netns exec "$ns" nft -f "$work/$t.nft"
        echo "round $round $t: $(ip netns exec "$ns" python3 "$here/client.py" "$connects")"
    done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
