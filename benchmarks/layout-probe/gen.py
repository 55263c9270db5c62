#!/usr/bin/env python3
"""Writes `nft -f` scripts of one synthetic kube-proxy table in a chosen dispatch layout, and of a series of single
changes on it, for run.sh to time in the kernel. No Java: it measures what a layout costs the kernel, not nftproxy.

Layouts (docs/table-layout.md, "Measured: dispatch through data maps"):
  fast      today's default: per-service chain with a numgen cascade, service-ips element `goto` that chain.
  flatgoto  service-ips element `goto flat-dnat-N` (one chain per endpoint count N, its one rule DNATs through the
            shared data map flat-endpoints keyed by destination . proto . port . index).
  flat      service-ips element `continue`; after the service-ips lookup one rule per endpoint count N:
            `... @flat-ips-N dnat ... numgen random mod N map @flat-endpoints`. No verdict refers to anything
            per service, so a change is element updates of non-verdict sets and maps only.
  flatlean  flat without its service-ips elements, and a service port without endpoints in the plain set
            flat-no-endpoints (rejected by a rule in service-endpoints-check) instead of no-endpoint-services
            `goto reject-chain`: no verdict element per service at all, at the price of those two maps' meaning.
  flatset   flat (service-ips keeps every port, verdict `continue`), and a port without endpoints in the plain set
            flat-no-endpoints, which one fixed rule after the no-endpoint-services lookup sends to reject-chain;
            no-endpoint-services keeps only kube-proxy's `drop` elements (Local policy, no local endpoint).
  flatvmap  flat, and no-endpoint-services stays the verdict map listing every port without endpoints: its
            element is `continue` instead of `goto reject-chain`, and one fixed rule right after the vmap lookup,
            `... @no-endpoint-services goto reject-chain` (the map used as a set), rejects what fell through.
            `drop` and `goto reject-chain` elements keep kube-proxy's meaning; no element names a chain.

Changes (each on a different service, applied cumulatively in file order):
  add-service, remove-service, add-endpoint (N -> N+1), remove-endpoint (N -> N-1),
  move-endpoint (one address replaced), no-endpoints (last endpoints removed: no-endpoint-services
  `goto reject-chain` as kube-proxy, or the layout's form above), back-from-none (the first endpoint returns).
  add-chain-port (flat layouts only: a port that is not simple, e.g. a Local policy, written as `fast` writes it:
  its own chain and a service-ips `goto`, so the commit validates: what such a change costs in each variant).
  With more changes than the table has services for, the victims cycle over the table (each change still picks a
  port in the state its kind needs: two endpoints or more to remove one, fewer than 16 to add one).

Addresses: services 172.16.0.0/12, endpoints 10.0.0.0/8 (private ranges only; the table is loaded in a throwaway
namespace and no packet is sent).

With FLAT_MAPS=per-count in the environment, the data-map layouts keep one endpoint map per count N
(flat-endpoints-N) instead of one shared map, so that the rule of a count used for the first time binds an empty map
(binding a rule to a map walks all its elements); moving a service port between counts then moves its elements.

With NO_ENDPOINT_SHARE=F (0 < F < 1), every round(1/F)-th port of the full table has no endpoints (a table with
many Services scaled to zero: the no-endpoint elements that a validating commit walks).

Usage: gen.py LAYOUT SERVICES ENDPOINTS CHANGES_PER_KIND OUTDIR
"""
import os
import sys

FLAT_COUNTS_PRECREATED = 16  # flat: counts 1..16 have their set and rule from the start
LAYOUTS = ("fast", "flatgoto", "flat", "flatlean", "flatset", "flatvmap")
FLAT_RULES = ("flat", "flatlean", "flatset", "flatvmap")  # dispatch by flat-ips-N set rules
CONTINUE_ELEMENTS = ("flat", "flatset", "flatvmap")  # service-ips keeps every port, verdict continue
PER_COUNT_MAPS = os.environ.get("FLAT_MAPS", "shared") == "per-count"
NO_ENDPOINT_SHARE = float(os.environ.get("NO_ENDPOINT_SHARE", "0"))


def emap(n):
    return "flat-endpoints-%d" % n if PER_COUNT_MAPS else "flat-endpoints"


def emap_decl(n):
    return ('add map ip kube-proxy %s { typeof ip daddr . meta l4proto . tcp dport . numgen random mod 2 '
            ': ip daddr . tcp dport ; comment "endpoint i of a flat service port" ; }' % emap(n))


def cluster_ip(i):
    a = i + 1
    return "172.%d.%d.%d" % (16 + (a >> 16), (a >> 8) & 255, a & 255)


class Endpoints:
    def __init__(self):
        self.next = 0

    def fresh(self, n):
        out = []
        for _ in range(n):
            self.next += 1
            a = self.next
            out.append("10.%d.%d.%d" % (a >> 16, (a >> 8) & 255, a & 255))
        return out


def chain(i):
    return "service-%08d-bench/svc-%d/tcp/http" % (i, i)


def skeleton(layout):
    t = "ip kube-proxy"
    out = [
        'add table %s { comment "rules for kube-proxy" ; }' % t,
        'add set %s cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }' % t,
        'add set %s nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }' % t,
        'add set %s hairpin-connections { type ipv4_addr . ipv4_addr . inet_proto . inet_service ; }' % t,
        'add map %s service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }' % t,
        'add map %s service-nodeports { type inet_proto . inet_service : verdict ; }' % t,
        'add map %s firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }' % t,
        'add map %s no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; }' % t,
        'add map %s no-endpoint-nodeports { type inet_proto . inet_service : verdict ; }' % t,
    ]
    if layout != "fast":
        for n in (range(1, FLAT_COUNTS_PRECREATED + 1) if PER_COUNT_MAPS else [1]):
            out.append(emap_decl(n))
    if layout in FLAT_RULES:
        for n in range(1, FLAT_COUNTS_PRECREATED + 1):
            out.append(flat_set(n))
    if layout in ("flatlean", "flatset"):
        out.append('add set %s flat-no-endpoints { type ipv4_addr . inet_proto . inet_service ; '
                   'comment "service ports with no endpoints, rejected" ; }' % t)
    if layout == "flatset":
        out.append('add set %s flat-no-endpoint-nodeports { type inet_proto . inet_service ; '
                   'comment "service nodeports with no endpoints, rejected" ; }' % t)
    for c in ["filter-prerouting-pre-dnat { type filter hook prerouting priority dstnat - 10 ; }",
              "filter-output-pre-dnat { type filter hook output priority -110 ; }",
              "filter-input { type filter hook input priority filter ; }",
              "filter-forward { type filter hook forward priority filter ; }",
              "filter-output { type filter hook output priority filter ; }",
              "nat-prerouting { type nat hook prerouting priority dstnat ; }",
              "nat-output { type nat hook output priority -100 ; }",
              "nat-postrouting { type nat hook postrouting priority srcnat ; }",
              "services", "masquerading", "cluster-ips-check", "firewall-check", "reject-chain",
              "service-endpoints-check", "nodeport-endpoints-check"]:
        out.append("add chain %s %s" % (t, c))
    if layout == "flatgoto":
        for n in range(1, FLAT_COUNTS_PRECREATED + 1):
            out.append("add chain %s flat-dnat-%d" % (t, n))
            out.append("add rule %s flat-dnat-%d %s" % (t, n, flat_dnat(n)))
    r = lambda c, s: out.append("add rule %s %s %s" % (t, c, s))
    r("filter-prerouting-pre-dnat", "ct state new jump firewall-check")
    r("filter-output-pre-dnat", "ct state new jump firewall-check")
    r("filter-input", "ct state new jump nodeport-endpoints-check")
    r("filter-input", "ct state new jump service-endpoints-check")
    r("filter-forward", "ct state new jump service-endpoints-check")
    r("filter-forward", "ct state new jump cluster-ips-check")
    r("filter-output", "ct state new jump service-endpoints-check")
    r("filter-output", "ct state new jump cluster-ips-check")
    r("nat-prerouting", "jump services")
    r("nat-output", "jump services")
    r("nat-postrouting", "jump masquerading")
    r("services", "ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x4000")
    r("services", "ip daddr . meta l4proto . th dport vmap @service-ips")
    r("services", "ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports")
    if layout in FLAT_RULES:
        for n in range(1, FLAT_COUNTS_PRECREATED + 1):
            r("services", flat_rule(n))
    r("masquerading", "mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random")
    r("masquerading", "ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random")
    r("cluster-ips-check", "ip daddr @cluster-ips reject")
    r("firewall-check", "ip daddr . meta l4proto . th dport vmap @firewall-ips")
    r("reject-chain", "reject")
    r("service-endpoints-check", "ip daddr . meta l4proto . th dport vmap @no-endpoint-services")
    if layout == "flatlean":
        r("service-endpoints-check", "ip daddr . meta l4proto . th dport @flat-no-endpoints reject")
    if layout == "flatset":
        r("service-endpoints-check", "ip daddr . meta l4proto . th dport @flat-no-endpoints goto reject-chain")
    if layout == "flatvmap":
        r("service-endpoints-check", "ip daddr . meta l4proto . th dport @no-endpoint-services goto reject-chain")
    r("nodeport-endpoints-check", "ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports")
    if layout == "flatset":
        r("nodeport-endpoints-check", "ip daddr @nodeport-ips meta l4proto . th dport @flat-no-endpoint-nodeports goto reject-chain")
    if layout == "flatvmap":
        r("nodeport-endpoints-check", "ip daddr @nodeport-ips meta l4proto . th dport @no-endpoint-nodeports goto reject-chain")
    out.append("add element %s nodeport-ips { 192.168.10.20 }" % t)
    return out


# The map is declared with `typeof`, as numgen's value has no named type; `tcp dport` rather than `th dport`
# because nft 1.0.6 cannot rebuild a `th` typeof from the kernel's userdata when a later rule references the map
# ("conflicting protocols specified: ip vs. th"). Both are the same key type; UDP/SCTP keys fit as well.


def flat_set(n):
    return ('add set ip kube-proxy flat-ips-%d { type ipv4_addr . inet_proto . inet_service ; '
            'comment "flat service ports with %d endpoints" ; }' % (n, n))


def flat_dnat(n):
    return ("dnat ip addr . port to ip daddr . meta l4proto . th dport . numgen random mod %d map @%s" % (n, emap(n)))


def flat_rule(n):
    return "ip daddr . meta l4proto . th dport @flat-ips-%d %s" % (n, flat_dnat(n))


def cascade(eps):
    n = len(eps)
    rules = []
    for k, ep in enumerate(eps):
        left = n - k
        cond = "numgen random mod %d 0 " % left if left > 1 else ""
        rules.append("meta l4proto tcp %sdnat to %s:8080" % (cond, ep))
    return rules


class Table:
    """The service ports of one table and the commands each layout needs to add, remove or change one."""

    def __init__(self, layout):
        self.layout = layout
        self.eps = {}
        self.counts_with_rules = set(range(1, FLAT_COUNTS_PRECREATED + 1))

    def no_endpoints(self, i, add):
        t = "ip kube-proxy"
        where = "flat-no-endpoints" if self.layout in ("flatlean", "flatset") else "no-endpoint-services"
        if not add:
            return "delete element %s %s { %s }" % (t, where, self.key(i))
        # kube-proxy comments each no-endpoint element with the port's name
        elem = '%s comment "bench/svc-%d:http"' % (self.key(i), i)
        if self.layout in ("flatlean", "flatset"):
            return "add element %s %s { %s }" % (t, where, elem)
        verdict = "continue" if self.layout == "flatvmap" else "goto reject-chain"
        return "add element %s %s { %s : %s }" % (t, where, elem, verdict)

    def key(self, i):
        return "%s . tcp . 80" % cluster_ip(i)

    def ensure_count(self, n, out):
        # a count above the pre-created ones gets its set and rule (flat) or chain (flatgoto) on first use
        if n == 0 or n in self.counts_with_rules:
            return
        self.counts_with_rules.add(n)
        if PER_COUNT_MAPS and self.layout != "fast":
            out.append(emap_decl(n))
        if self.layout in FLAT_RULES:
            out.append(flat_set(n))
            out.append("add rule ip kube-proxy services %s" % flat_rule(n))
        elif self.layout == "flatgoto":
            out.append("add chain ip kube-proxy flat-dnat-%d" % n)
            out.append("add rule ip kube-proxy flat-dnat-%d %s" % (n, flat_dnat(n)))

    def add(self, i, eps):
        out = []
        t = "ip kube-proxy"
        self.eps[i] = list(eps)
        out.append("add element %s cluster-ips { %s }" % (t, cluster_ip(i)))
        if not eps:
            out.append(self.no_endpoints(i, True))
            return out
        self.ensure_count(len(eps), out)
        out += self.dispatch(i, eps, add=True)
        return out

    def add_chain_port(self, i, eps):
        """A port that keeps its own chain in every layout (not simple): cluster-ips, its chain, a `goto`."""
        t = "ip kube-proxy"
        out = ["add element %s cluster-ips { %s }" % (t, cluster_ip(i)), "add chain %s %s" % (t, chain(i))]
        out += ["add rule %s %s %s" % (t, chain(i), r) for r in cascade(eps)]
        out.append("add element %s service-ips { %s : goto %s }" % (t, self.key(i), chain(i)))
        return out

    def dispatch(self, i, eps, add):
        """The commands that route service port i to eps (add) or that remove that routing (not add)."""
        t = "ip kube-proxy"
        verb = "add" if add else "delete"
        n = len(eps)
        out = []
        if self.layout == "fast":
            if add:
                out.append("add chain %s %s" % (t, chain(i)))
                out += ["add rule %s %s %s" % (t, chain(i), r) for r in cascade(eps)]
                out.append("add element %s service-ips { %s : goto %s }" % (t, self.key(i), chain(i)))
            else:
                out.append("delete element %s service-ips { %s }" % (t, self.key(i)))
                out.append("flush chain %s %s" % (t, chain(i)))
                out.append("delete chain %s %s" % (t, chain(i)))
            return out
        elems = ", ".join("%s . %d : %s . 8080" % (self.key(i), k, ep) for k, ep in enumerate(eps))
        if self.layout in FLAT_RULES:
            if add:
                if self.layout in CONTINUE_ELEMENTS:
                    out.append("add element %s service-ips { %s : continue }" % (t, self.key(i)))
                out.append("add element %s %s { %s }" % (t, emap(n), elems))
                out.append("add element %s flat-ips-%d { %s }" % (t, n, self.key(i)))
            else:
                out.append("delete element %s flat-ips-%d { %s }" % (t, n, self.key(i)))
                out.append("delete element %s %s { %s }" % (t, emap(n), ", ".join(
                    "%s . %d" % (self.key(i), k) for k in range(n))))
                if self.layout in CONTINUE_ELEMENTS:
                    out.append("delete element %s service-ips { %s }" % (t, self.key(i)))
        else:
            if add:
                out.append("add element %s %s { %s }" % (t, emap(n), elems))
                out.append("add element %s service-ips { %s : goto flat-dnat-%d }" % (t, self.key(i), n))
            else:
                out.append("delete element %s service-ips { %s }" % (t, self.key(i)))
                out.append("delete element %s %s { %s }" % (t, emap(n), ", ".join(
                    "%s . %d" % (self.key(i), k) for k in range(n))))
        return out

    def remove(self, i):
        t = "ip kube-proxy"
        eps = self.eps.pop(i)
        out = []
        if eps:
            out += self.dispatch(i, eps, add=False)
        else:
            out.append(self.no_endpoints(i, False))
        out.append("delete element %s cluster-ips { %s }" % (t, cluster_ip(i)))
        return out

    def change(self, i, eps):
        """Service port i now has eps instead of its current endpoints."""
        t = "ip kube-proxy"
        old = self.eps[i]
        self.eps[i] = list(eps)
        out = []
        if not old and not eps:
            return out
        if not eps:
            out += self.dispatch(i, old, add=False)
            out.append(self.no_endpoints(i, True))
            return out
        if not old:
            out.append(self.no_endpoints(i, False))
            self.ensure_count(len(eps), out)
            out += self.dispatch(i, eps, add=True)
            return out
        self.ensure_count(len(eps), out)
        if self.layout == "fast":
            out.append("flush chain %s %s" % (t, chain(i)))
            out += ["add rule %s %s %s" % (t, chain(i), r) for r in cascade(eps)]
            return out
        if PER_COUNT_MAPS and len(old) != len(eps):
            # the key moves to another count: all its endpoints move to that count's map
            out.append("delete element %s %s { %s }" % (t, emap(len(old)), ", ".join(
                "%s . %d" % (self.key(i), k) for k in range(len(old)))))
            out.append("add element %s %s { %s }" % (t, emap(len(eps)), ", ".join(
                "%s . %d : %s . 8080" % (self.key(i), k, ep) for k, ep in enumerate(eps))))
        else:
            # data-map layouts: rewrite the index elements that differ
            for k in range(len(eps), len(old)):
                out.append("delete element %s %s { %s . %d }" % (t, emap(len(old)), self.key(i), k))
            changed = [k for k in range(min(len(old), len(eps))) if old[k] != eps[k]]
            if changed:
                out.append("delete element %s %s { %s }" % (t, emap(len(eps)), ", ".join(
                    "%s . %d" % (self.key(i), k) for k in changed)))
            added = changed + list(range(len(old), len(eps)))
            if added:
                out.append("add element %s %s { %s }" % (t, emap(len(eps)), ", ".join(
                    "%s . %d : %s . 8080" % (self.key(i), k, eps[k]) for k in added)))
        # and the key moves between counts
        if len(old) != len(eps):
            if self.layout in FLAT_RULES:
                out.append("delete element %s flat-ips-%d { %s }" % (t, len(old), self.key(i)))
                out.append("add element %s flat-ips-%d { %s }" % (t, len(eps), self.key(i)))
            else:
                out.append("delete element %s service-ips { %s }" % (t, self.key(i)))
                out.append("add element %s service-ips { %s : goto flat-dnat-%d }" % (t, self.key(i), len(eps)))
        return out


def victim_picker(table, services, step):
    """Returns pick(ok): the next service of the table, in steps of `step`, cycling, whose endpoints satisfy ok."""
    order = list(range(0, services, step))
    pos = [0]

    def pick(ok):
        for _ in range(len(order)):
            i = order[pos[0] % len(order)]
            pos[0] += 1
            if i in table.eps and ok(table.eps[i]):
                return i
        sys.exit("no service left in a state this change needs; use a larger table or fewer changes")
    return pick


def main():
    layout, services, per, changes, outdir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    if layout not in LAYOUTS:
        sys.exit("layout must be one of " + ", ".join(LAYOUTS))
    os.makedirs(outdir, exist_ok=True)
    epgen = Endpoints()
    table = Table(layout)
    full = skeleton(layout)
    every = round(1 / NO_ENDPOINT_SHARE) if NO_ENDPOINT_SHARE > 0 else 0
    for i in range(services):
        full += table.add(i, [] if every and i % every == every - 1 else epgen.fresh(per))
    with open(os.path.join(outdir, "full.nft"), "w") as f:
        f.write("\n".join(full) + "\n")
    # each kind touches its own services, spread over the table
    pick = victim_picker(table, services, max(1, services // (8 * changes + 8)))
    has_some = lambda eps: len(eps) >= 1
    scripts = []
    nxt = services
    for c in range(changes):
        scripts.append(("add-service", table.add(nxt, epgen.fresh(per))))
        nxt += 1
        scripts.append(("remove-service", table.remove(pick(lambda eps: True))))
        i = pick(lambda eps: 1 <= len(eps) < FLAT_COUNTS_PRECREATED)
        scripts.append(("add-endpoint", table.change(i, table.eps[i] + epgen.fresh(1))))
        i = pick(lambda eps: len(eps) >= 2)
        scripts.append(("remove-endpoint", table.change(i, table.eps[i][:-1])))
        i = pick(has_some)
        scripts.append(("move-endpoint", table.change(i, table.eps[i][1:] + epgen.fresh(1))))
        i = pick(has_some)
        scripts.append(("no-endpoints", table.change(i, [])))
        scripts.append(("back-from-none", table.change(i, epgen.fresh(1))))
        if layout in FLAT_RULES:
            scripts.append(("add-chain-port", table.add_chain_port(nxt, epgen.fresh(per))))
            nxt += 1
    # the first service port with an endpoint count that has no set/chain yet (flat layouts: rule added)
    i = pick(has_some)
    scripts.append(("new-count", table.change(i, table.eps[i] + epgen.fresh(FLAT_COUNTS_PRECREATED + 1 - len(table.eps[i])))))
    for k, (kind, cmds) in enumerate(scripts):
        with open(os.path.join(outdir, "change-%04d-%s.nft" % (k + 1, kind)), "w") as f:
            f.write("\n".join(cmds) + "\n")


if __name__ == "__main__":
    main()
