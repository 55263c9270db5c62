#!/usr/bin/env python3
"""Packets to a service port that loses its last endpoint, in one no-endpoint layout (gen.py's names): `flat`
(kube-proxy's `no-endpoint-services` element `goto reject-chain`), `flatset` (the port in the plain set
flat-no-endpoints, one fixed rule to reject-chain) or `flatvmap` (`no-endpoint-services` element `continue`, one
fixed rule `... @no-endpoint-services goto reject-chain`). Run by traffic-noendpoint.sh: `node LAYOUT CLIENT_NS`
inside the node namespace (the table, the endpoints), which runs `client` inside the client namespace, a
pod-like peer behind a veth whose packets to service addresses are forwarded by the node (kube-proxy's
no-endpoint reject sits on input, forward and output; a pod's packets take forward, NodePorts input).

One service port set A, dispatched flat with 2 endpoints: TCP 80 on ClusterIP 172.16.0.1 and external IP 192.0.2.7,
UDP 80 on the ClusterIP, NodePort tcp 30080 on node IP 192.168.10.20. One port B with kube-proxy's `drop`
elements (Local policy, no local endpoint): external IP 192.0.2.8 tcp 80 and NodePort tcp 30082. Three phases:
A with endpoints, A after the layout's "no endpoints" commands, A after its "back from none" commands.
Expected, as kube-proxy (plain `reject` in reject-chain): without endpoints every TCP connect and every UDP
datagram to A is refused by ICMP port-unreachable, counted once each by reject-chain's counter on the node and by
the client's input counter, never by cluster-ips-check and never a TCP reset; B always times out (dropped);
with endpoints every attempt reaches an endpoint. Exits non-zero on the first difference.
"""
import collections
import errno
import json
import socket
import subprocess
import sys
import threading
import time

LAYOUT = sys.argv[2] if sys.argv[1] == "node" else None
T = "ip kube-proxy"
EP = ("10.0.0.1", "10.0.0.2")
TCP_C, TCP_E, UDP_C = "172.16.0.1 . tcp . 80", "192.0.2.7 . tcp . 80", "172.16.0.1 . udp . 80"
NP = "tcp . 30080"
KEYS = (TCP_C, TCP_E, UDP_C)
ATTEMPTS = 20


def nft(script):
    subprocess.run(["nft", "-f", "-"], input=script, text=True, check=True)


def counter(table, name, netns=None):
    cmd = ["nft", "list", "counter", table, name]
    out = subprocess.run((["ip", "netns", "exec", netns] if netns else []) + cmd,
                         capture_output=True, text=True, check=True).stdout
    return int(out.split("packets ")[1].split()[0])


def counters(client_ns):
    return {"reject-chain": counter(T, "rejected-no-endpoint"), "cluster-ips-check": counter(T, "rejected-cluster-ip"),
            "icmp-port-unreachable": counter("ip nftp-observe", "icmp-port-unreachable", client_ns),
            "tcp-reset": counter("ip nftp-observe", "tcp-reset", client_ns)}


def table():
    s = ["add table %s" % T]
    s += ["add counter %s %s" % (T, c) for c in ("rejected-no-endpoint", "rejected-cluster-ip")]
    s += ["add set %s cluster-ips { type ipv4_addr ; }" % T,
          "add set %s nodeport-ips { type ipv4_addr ; }" % T]
    for m in ("service-ips", "no-endpoint-services"):
        s.append("add map %s %s { type ipv4_addr . inet_proto . inet_service : verdict ; }" % (T, m))
    for m in ("service-nodeports", "no-endpoint-nodeports"):
        s.append("add map %s %s { type inet_proto . inet_service : verdict ; }" % (T, m))
    s += ["add set %s flat-external-ips { type ipv4_addr . inet_proto . inet_service ; }" % T,
          "add set %s flat-ips-2 { type ipv4_addr . inet_proto . inet_service ; }" % T,
          "add set %s flat-nodeports-2 { type inet_proto . inet_service ; }" % T,
          # data `th dport`, not gen.py's `tcp dport`: with `tcp dport` in the data, nft 1.0.6 gives every rule
          # that DNATs through the map a hidden `meta l4proto tcp` match, and UDP ports are not DNATed at all.
          # (`th dport` data works only for rules added in the map's own transaction, as here.)
          "add map %s flat-endpoints-2 { typeof ip daddr . meta l4proto . tcp dport . numgen random mod 2 "
          ": ip daddr . th dport ; }" % T,
          "add map %s flat-nodeport-endpoints-2 { typeof meta l4proto . tcp dport . numgen random mod 2 "
          ": ip daddr . th dport ; }" % T]
    if LAYOUT == "flatset":
        s += ["add set %s flat-no-endpoints { type ipv4_addr . inet_proto . inet_service ; }" % T,
              "add set %s flat-no-endpoint-nodeports { type inet_proto . inet_service ; }" % T]
    s += ["add chain %s %s" % (T, c) for c in (
        "nat-prerouting { type nat hook prerouting priority dstnat ; }",
        "nat-output { type nat hook output priority -100 ; }",
        "nat-postrouting { type nat hook postrouting priority srcnat ; }",
        "filter-input { type filter hook input priority filter ; }",
        "filter-forward { type filter hook forward priority filter ; }",
        "filter-output { type filter hook output priority filter ; }",
        "services", "masquerading", "cluster-ips-check", "reject-chain",
        "service-endpoints-check", "nodeport-endpoints-check")]
    rules = [
        ("nat-prerouting", "jump services"),
        ("nat-output", "jump services"),
        ("nat-postrouting", "jump masquerading"),
        ("filter-input", "ct state new jump nodeport-endpoints-check"),
        ("filter-input", "ct state new jump service-endpoints-check"),
        ("filter-forward", "ct state new jump service-endpoints-check"),
        ("filter-forward", "ct state new jump cluster-ips-check"),
        ("filter-output", "ct state new jump service-endpoints-check"),
        ("filter-output", "ct state new jump cluster-ips-check"),
        ("services", "ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x4000"),
        ("services", "ip daddr . meta l4proto . th dport vmap @service-ips"),
        ("services", "ip daddr . meta l4proto . th dport @flat-external-ips mark set mark or 0x4000"),
        ("services", "ip daddr . meta l4proto . th dport @flat-ips-2 dnat ip addr . port to "
                     "ip daddr . meta l4proto . th dport . numgen random mod 2 map @flat-endpoints-2"),
        ("services", "ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports"),
        ("services", "ip daddr @nodeport-ips meta l4proto . th dport @flat-nodeports-2 mark set mark or 0x4000 "
                     "dnat ip addr . port to meta l4proto . th dport . numgen random mod 2 map @flat-nodeport-endpoints-2"),
        ("masquerading", "mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random"),
        ("cluster-ips-check", 'ip daddr @cluster-ips counter name "rejected-cluster-ip" reject'),
        ("reject-chain", 'counter name "rejected-no-endpoint" reject'),
        ("service-endpoints-check", "ip daddr . meta l4proto . th dport vmap @no-endpoint-services"),
        ("nodeport-endpoints-check", "ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports"),
    ]
    if LAYOUT == "flatset":
        rules += [("service-endpoints-check", "ip daddr . meta l4proto . th dport @flat-no-endpoints goto reject-chain"),
                  ("nodeport-endpoints-check",
                   "ip daddr @nodeport-ips meta l4proto . th dport @flat-no-endpoint-nodeports goto reject-chain")]
    if LAYOUT == "flatvmap":
        rules += [("service-endpoints-check", "ip daddr . meta l4proto . th dport @no-endpoint-services goto reject-chain"),
                  ("nodeport-endpoints-check",
                   "ip daddr @nodeport-ips meta l4proto . th dport @no-endpoint-nodeports goto reject-chain")]
    # services-endpoints-check and nodeport-endpoints-check must keep kube-proxy's order: the vmap lookup first
    s += ["add rule %s %s %s" % (T, c, r) for c, r in rules]
    s += ["add element %s cluster-ips { 172.16.0.1 }" % T,
          "add element %s nodeport-ips { 192.168.10.20 }" % T,
          # port B: kube-proxy's drop elements (eTP Local, no local endpoint), the same in every layout
          'add element %s no-endpoint-services { 192.0.2.8 . tcp . 80 comment "ns/b:http" : drop }' % T,
          'add element %s no-endpoint-nodeports { tcp . 30082 comment "ns/b:http" : drop }' % T]
    return "\n".join(s + dispatch("add")) + "\n"


def dispatch(verb):
    """The commands that give port set A its endpoints (add) or take them away (delete), as gen.py writes them."""
    ks = ", ".join(KEYS)
    eps = ", ".join("%s . %d%s" % (k, i, " : %s . 8080" % EP[i] if verb == "add" else "") for k in KEYS for i in (0, 1))
    np_eps = ", ".join("%s . %d%s" % (NP, i, " : %s . 8080" % EP[i] if verb == "add" else "") for i in (0, 1))
    cont = lambda k: k + (" : continue" if verb == "add" else "")
    return ["%s element %s service-ips { %s }" % (verb, T, ", ".join(cont(k) for k in KEYS)),
            "%s element %s service-nodeports { %s }" % (verb, T, cont(NP)),
            "%s element %s flat-endpoints-2 { %s }" % (verb, T, eps),
            "%s element %s flat-nodeport-endpoints-2 { %s }" % (verb, T, np_eps),
            "%s element %s flat-external-ips { %s }" % (verb, T, TCP_E),
            "%s element %s flat-ips-2 { %s }" % (verb, T, ks),
            "%s element %s flat-nodeports-2 { %s }" % (verb, T, NP)]


def no_endpoints(verb):
    """The layout's commands that mark port set A as having no endpoints (add) or no longer (delete)."""
    svc, np = "no-endpoint-services", "no-endpoint-nodeports"
    if LAYOUT == "flatset":
        svc, np = "flat-no-endpoints", "flat-no-endpoint-nodeports"
    if verb == "delete":
        return ["delete element %s %s { %s }" % (T, svc, ", ".join(KEYS)), "delete element %s %s { %s }" % (T, np, NP)]
    verdict = {"flat": " : goto reject-chain", "flatset": "", "flatvmap": " : continue"}[LAYOUT]
    el = lambda k: '%s comment "ns/a:http"%s' % (k, verdict)
    return ["add element %s %s { %s }" % (T, svc, ", ".join(el(k) for k in KEYS)),
            "add element %s %s { %s }" % (T, np, el(NP))]


def serve_tcp(addr):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, 8080))
    s.listen(64)
    while True:
        c, _ = s.accept()
        c.sendall(addr.encode())
        c.close()


def serve_udp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 8080))
    while True:
        _, peer = s.recvfrom(100)
        s.sendto(addr.encode(), peer)


def tcp(dst, port, sport):
    try:
        c = socket.create_connection((dst, port), timeout=1, source_address=("0.0.0.0", sport))
    except ConnectionRefusedError:
        return "refused"
    except socket.timeout:
        return "timeout"
    except OSError as e:  # e.g. host unreachable: recorded, and a failure in every phase
        return errno.errorcode.get(e.errno, str(e))
    with c:
        return c.recv(100).decode()


def udp(dst, port, sport):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.bind(("0.0.0.0", sport))
    s.connect((dst, port))
    try:
        s.send(b"ping")
        return s.recv(100).decode()
    except ConnectionRefusedError:
        return "refused"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e))
    finally:
        s.close()


A = (("tcp", "172.16.0.1", 80), ("tcp", "192.0.2.7", 80), ("udp", "172.16.0.1", 80), ("tcp", "192.168.10.20", 30080))
B = (("tcp", "192.0.2.8", 80), ("tcp", "192.168.10.20", 30082))


def client(first_port):
    """Client side: every attempt of one phase, printed as JSON for the node side. Each attempt has a source port
    of its own, so that none follows a conntrack entry (and its DNAT) left by an earlier phase."""
    out = []
    sports = iter(range(first_port, first_port + 1000))
    for proto, dst, port in A:
        seen = collections.Counter()
        for _ in range(ATTEMPTS):
            seen[(tcp if proto == "tcp" else udp)(dst, port, next(sports))] += 1
            # under the kernel's global ICMP rate limit (1,000/s), which a tight loop of refusals would reach
            time.sleep(0.005)
        out.append(["A", proto, dst, port, seen])
    for proto, dst, port in B:
        out.append(["B", proto, dst, port, collections.Counter(tcp(dst, port, next(sports)) for _ in range(2))])
    print(json.dumps(out))


def phase(name, expect_a, client_ns, first_port):
    before = counters(client_ns)
    failures = []
    res = subprocess.run(["ip", "netns", "exec", client_ns, "python3", __file__, "client", str(first_port)],
                         capture_output=True, text=True, check=True).stdout
    for which, proto, dst, port, seen in json.loads(res):
        print("  %s %s %s %s:%d %s" % (name, which, proto, dst, port, seen))
        if which == "B":
            ok = set(seen) == {"timeout"}
        elif expect_a == "refused":
            ok = set(seen) == {"refused"}
        else:
            ok = set(seen) == set(EP)
        if not ok:
            failures.append("%s %s %s:%d" % (which, proto, dst, port))
    delta = {k: v - before[k] for k, v in counters(client_ns).items()}
    print("  %s counters %s" % (name, delta))
    rejected = ATTEMPTS * len(A) if expect_a == "refused" else 0
    want = {"reject-chain": rejected, "cluster-ips-check": 0, "icmp-port-unreachable": rejected, "tcp-reset": 0}
    if delta != want:
        failures.append("counters %s, expected %s" % (delta, want))
    return failures


def main():
    if sys.argv[1] == "client":
        client(int(sys.argv[2]))
        return
    client_ns = sys.argv[3]
    # what reaches the client: ICMP port-unreachable and TCP resets, counted at its input
    subprocess.run(["ip", "netns", "exec", client_ns, "nft", "-f", "-"], text=True, check=True, input=(
        "add table ip nftp-observe\n"
        "add counter ip nftp-observe icmp-port-unreachable\nadd counter ip nftp-observe tcp-reset\n"
        "add chain ip nftp-observe input { type filter hook input priority -300 ; }\n"
        'add rule ip nftp-observe input icmp type destination-unreachable icmp code port-unreachable counter name "icmp-port-unreachable"\n'
        'add rule ip nftp-observe input tcp flags & rst != 0 counter name "tcp-reset"\n'))
    nft(table())
    for a in EP:
        threading.Thread(target=serve_tcp, args=(a,), daemon=True).start()
        threading.Thread(target=serve_udp, args=(a,), daemon=True).start()
    time.sleep(0.3)
    print("# %s" % LAYOUT)
    failures = phase("with-endpoints", "served", client_ns, 31000)
    nft("\n".join(dispatch("delete") + no_endpoints("add")) + "\n")
    failures += phase("no-endpoints", "refused", client_ns, 32000)
    nft("\n".join(no_endpoints("delete") + dispatch("add")) + "\n")
    failures += phase("back-from-none", "served", client_ns, 33000)
    if failures:
        print("FAIL %s: %s" % (LAYOUT, "; ".join(failures)))
        sys.exit(1)
    print("OK %s" % LAYOUT)


if __name__ == "__main__":
    main()
