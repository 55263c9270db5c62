#!/usr/bin/env bash
# An hour of churn against a real kube-apiserver (issue 23's soak; run as root, not part of CI):
#
#   benchmarks/soak.sh OUT_DIR                         # 10,000 Services x 2 endpoints, 5 changes/s, 60 min, restart every 10 min
#   SERVICES=1000 MINUTES=2 RESTART_MINUTES=1 benchmarks/soak.sh /tmp/soak-short    # a quick check of the harness
#   /usr/bin/python3 benchmarks/soak-plot.py OUT_DIR/samples.csv docs/soak.png      # the plot (python3-matplotlib)
#
# Needs kube-apiserver and etcd in ~/.cache/nftproxy/k8s-v1.36.3/bin (integration-tests/apiserver/build.sh puts
# them there). Builds nftproxy's jar, then runs integration-tests' SoakBench: the daemon runs through the checkout's
# launcher (./nftproxy, so the release's JVM flags from nftproxy-jvm.sh, plus -Xlog:gc to a file) in a throwaway
# network namespace (ip netns exec; deleted at the end) and reaches the API server through a relay on that
# namespace's loopback. OUT_DIR gets samples.csv (one row per SAMPLE_SECONDS), events.log (restarts, failed
# writes), gc.log, daemon.log, final-diff.txt and summary.txt (the figures; also printed as lines starting "SOAK").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(realpath -m "${1:?usage: benchmarks/soak.sh OUT_DIR}")"
bin="${NFTPROXY_TEST_CACHE:-$HOME/.cache/nftproxy}/k8s-v1.36.3/bin"
for b in kube-apiserver etcd; do
    [[ -x "$bin/$b" ]] || { echo "no $bin/$b: run integration-tests/apiserver/build.sh first" >&2; exit 2; }
done
mkdir -p "$out"
cd "$root"
./mvnw -B -q -ntp -DskipTests package -pl proxy-daemon -am
./mvnw -B -ntp test -pl integration-tests -am -Dtest=SoakBench -Dsurefire.failIfNoSpecifiedTests=false \
    -Dsoak.services="${SERVICES:-10000}" -Dsoak.minutes="${MINUTES:-60}" -Dsoak.restartMinutes="${RESTART_MINUTES:-10}" \
    -Dsoak.rate="${RATE:-5}" -Dsoak.sampleSeconds="${SAMPLE_SECONDS:-10}" -Dsoak.out="$out" \
    -Dbench.launcher="$root/nftproxy" > "$out/maven.log" 2>&1 || { tail -60 "$out/maven.log"; cat "$out/summary.txt" 2>/dev/null; exit 1; }
cat "$out/summary.txt"
