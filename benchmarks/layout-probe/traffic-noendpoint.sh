#!/bin/bash
# Real packets to a service port that loses its last endpoint and gets one back, in each no-endpoint layout
# (traffic-noendpoint.py says what is checked). Per layout two fresh namespaces: the node (the table, endpoints and
# node IP on its loopback, service ranges routed into a veth pair of its own so that they are forwarded) and a pod-like
# client behind a veth pair created inside them. Needs root; never touches the root namespace.
# Usage: benchmarks/layout-probe/traffic-noendpoint.sh [LAYOUTS="flat flatset flatvmap"]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=nftp-ne-node-$$
client=nftp-ne-client-$$
cleanup() { ip netns delete "$node" 2>/dev/null || true; ip netns delete "$client" 2>/dev/null || true; }
trap cleanup EXIT
rc=0
for layout in ${1:-flat flatset flatvmap}; do
    ip netns add "$node"
    ip netns add "$client"
    ip netns exec "$node" sysctl -q -w net.ipv4.ip_forward=1
    # the kernel's per-destination ICMP rate limit (1/s after a burst, the same under any table) would refuse only
    # some of the rapid attempts; off in this namespace so that every rejected attempt is answered
    ip netns exec "$node" sysctl -q -w net.ipv4.icmp_ratelimit=0
    ip netns exec "$node" ip link set lo up
    for a in 10.0.0.1 10.0.0.2 192.168.10.20; do ip netns exec "$node" ip addr add "$a/32" dev lo; done
    ip netns exec "$node" ip link add svc0 type veth peer name svc1
    ip netns exec "$node" ip link set svc0 up
    ip netns exec "$node" ip link set svc1 up
    ip netns exec "$node" ip route add 172.16.0.0/12 dev svc0
    ip netns exec "$node" ip route add 192.0.2.0/24 dev svc0
    ip netns exec "$node" ip link add veth-node type veth peer name veth-pod netns "$client"
    ip netns exec "$node" ip addr add 10.1.0.1/24 dev veth-node
    ip netns exec "$node" ip link set veth-node up
    ip netns exec "$client" ip link set lo up
    ip netns exec "$client" ip addr add 10.1.0.2/24 dev veth-pod
    ip netns exec "$client" ip link set veth-pod up
    ip netns exec "$client" ip route add default via 10.1.0.1
    ip netns exec "$node" python3 "$here/traffic-noendpoint.py" node "$layout" "$client" || rc=1
    cleanup
done
exit $rc
