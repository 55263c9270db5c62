#!/usr/bin/env python3
"""Writes the first-packet tables: one ClusterIP service port (172.16.0.1:80) with E = 2 or 16 endpoints
(10.0.1.1...), in the `fast` layout (service-ips -> goto a chain with the numgen cascade) and in the `flat` layout
(service-ips `continue`, then the 16 pre-created per-count rules; the port matches in rule E). Usage: tables.py DIR"""
import os, sys


def eps(n):
    return ["10.0.1.%d" % (k + 1) for k in range(n)]


HEADER = '''add table ip kube-proxy
add set ip kube-proxy cluster-ips { type ipv4_addr ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }
add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip kube-proxy services
add rule ip kube-proxy nat-output jump services
add rule ip kube-proxy services ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x4000
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add element ip kube-proxy cluster-ips { 172.16.0.1 }
'''

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for n in (2, 16):
    f = HEADER + "add chain ip kube-proxy svc\n"
    for k, e in enumerate(eps(n)):
        left = n - k
        cond = "numgen random mod %d 0 " % left if left > 1 else ""
        f += "add rule ip kube-proxy svc meta l4proto tcp %sdnat to %s:8080\n" % (cond, e)
    f += "add element ip kube-proxy service-ips { 172.16.0.1 . tcp . 80 : goto svc }\n"
    open(os.path.join(out, "fast-%d.nft" % n), "w").write(f)
    f = HEADER + "add set ip kube-proxy flat-external-ips { type ipv4_addr . inet_proto . inet_service ; }\n"
    f += "add rule ip kube-proxy services ip daddr . meta l4proto . th dport @flat-external-ips mark set mark or 0x4000\n"
    for c in range(1, 17):
        f += "add set ip kube-proxy flat-ips-%d { type ipv4_addr . inet_proto . inet_service ; }\n" % c
        f += ("add map ip kube-proxy flat-endpoints-%d { typeof ip daddr . meta l4proto . tcp dport . numgen random mod 2 "
              ": ip daddr . tcp dport ; }\n" % c)
        f += ("add rule ip kube-proxy services ip daddr . meta l4proto . th dport @flat-ips-%d dnat ip addr . port to "
              "ip daddr . meta l4proto . th dport . numgen random mod %d map @flat-endpoints-%d\n" % (c, c, c))
    f += "add element ip kube-proxy service-ips { 172.16.0.1 . tcp . 80 : continue }\n"
    f += "add element ip kube-proxy flat-ips-%d { 172.16.0.1 . tcp . 80 }\n" % n
    f += "add element ip kube-proxy flat-endpoints-%d { %s }\n" % (n, ", ".join(
        "172.16.0.1 . tcp . 80 . %d : %s . 8080" % (k, e) for k, e in enumerate(eps(n))))
    open(os.path.join(out, "flat-%d.nft" % n), "w").write(f)
