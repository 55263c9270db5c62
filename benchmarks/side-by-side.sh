#!/usr/bin/env bash
# nftproxy and upstream kube-proxy side by side against one real kube-apiserver (run as root):
#
#   benchmarks/side-by-side.sh                 # N = 1000 and 10000 Services x 2 endpoints
#   benchmarks/side-by-side.sh 1000            # one size
#   PROXIES=nftproxy benchmarks/side-by-side.sh 1000
#   PHASES=start PROXIES=nftproxy benchmarks/side-by-side.sh 45000              # only process start -> table complete
#   PHASES=start PROXIES=nftproxy STRACE=true benchmarks/side-by-side.sh 45000  # ... with the kernel's time per batch
#   LAYOUT=fast PROXIES=nftproxy benchmarks/side-by-side.sh 10000               # nftproxy with --table-layout fast
#   KUBE_PROXY=/path/to/kube-proxy benchmarks/side-by-side.sh 1000              # an upstream binary built elsewhere
#
# Builds (once, cached under ~/.cache/nftproxy) kube-apiserver, etcd and kube-proxy at the pinned release from the
# Go module proxy (kube-proxy only when it is measured and neither KUBE_PROXY nor the node cache's
# ~/.cache/nftproxy/node-v1.36.3/bin/kube-proxy has one), builds nftproxy's jar, then runs integration-tests'
# SideBySideBench: each proxy as its own process in a fresh network namespace, one at a time. Results print as
# table rows (lines starting "RESULT").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sizes="${1:-1000,10000}"
cd "$root"
integration-tests/apiserver/build.sh >/dev/null
kube_proxy="${KUBE_PROXY:-$HOME/.cache/nftproxy/node-v1.36.3/bin/kube-proxy}"
case ",${PROXIES:-kube-proxy,nftproxy}," in
    *,kube-proxy,*) [ -x "$kube_proxy" ] || kube_proxy="$(integration-tests/apiserver/build.sh kube-proxy | tail -1)/kube-proxy" ;;
esac
./mvnw -B -q -ntp -DskipTests package -pl proxy-daemon -am
./mvnw -B -ntp test -pl integration-tests -am -Dtest=SideBySideBench -Dsurefire.failIfNoSpecifiedTests=false \
    -Dbench.sizes="$sizes" -Dbench.proxies="${PROXIES:-kube-proxy,nftproxy}" -Dbench.kubeProxy="$kube_proxy" \
    -Dbench.jar="$root/proxy-daemon/target/nftproxy.jar" -Dbench.launcher="$root/nftproxy" \
    -Dbench.phases="${PHASES:-all}" -Dbench.strace="${STRACE:-false}" -Dbench.layout="${LAYOUT:-}" \
    | grep -E '^(RESULT|populated|timeline|batches|sendmsg|side by side|warm-up|proxy \||[a-z-]+ \| [0-9])' 
