#!/bin/bash
# Real connections through the `flat` dispatch rules (traffic-table.nft: one service port with 2 endpoints, reached
# on its ClusterIP, an external IP and a NodePort; every dispatch verdict `continue`, DNAT through data maps) in a
# fresh network namespace: endpoints, node IP and client on its loopback, 200 connects per address.
# Expected: ClusterIP from a cluster source spread over both endpoints and not masqueraded (the endpoint sees
# 10.0.0.9); external IP and NodePort spread and masqueraded (the masquerade counter counts 400 packets).
# Needs root; never touches the root namespace.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ns=nftp-flat-tr-$$
ip netns add "$ns"
trap 'ip netns delete "$ns"' EXIT
ip netns exec "$ns" ip link set lo up
for a in 10.0.0.1 10.0.0.2 192.168.10.20 10.0.0.9; do ip netns exec "$ns" ip addr add "$a/32" dev lo; done
ip netns exec "$ns" ip route add 172.16.0.0/12 dev lo src 10.0.0.9
ip netns exec "$ns" ip route add 192.0.2.0/24 dev lo src 192.168.10.20
ip netns exec "$ns" nft -f "$here/traffic-table.nft"
ip netns exec "$ns" python3 "$here/traffic-probe.py"
ip netns exec "$ns" nft list chain ip kube-proxy masquerading | grep -o 'counter packets [0-9]*'
