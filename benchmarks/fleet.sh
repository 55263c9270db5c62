#!/usr/bin/env bash
# A fleet's load on one real kube-apiserver: nftproxy's API source against client-go with kube-proxy's informers.
#
#   benchmarks/fleet.sh                      # 100 nodes, 1,000 Services x 2 endpoints, 1,000 changes, an idle minute
#   benchmarks/fleet.sh 200                  # 200 nodes
#   SIDES=nftproxy benchmarks/fleet.sh 100   # one side only (nftproxy or client-go)
#   SERVICES=1000 CHANGES=1000 IDLE=60 benchmarks/fleet.sh 100
#
# Builds (once, cached under ~/.cache/nftproxy) kube-apiserver and etcd at the pinned release, and
# benchmarks/fleet-client-go with client-go v0.36.3 from the Go module proxy (module cache ~/.cache/nftproxy/go-mod,
# the toolchain integration-tests/apiserver/build.sh uses), then runs integration-tests' FleetBench: per side, N
# simulated nodes against the same API server, restarted (same etcd) before each side. Results print as table
# rows (lines starting "RESULT"); the method is in FleetBench's comment and docs/benchmarks.md. Needs no root and
# no network namespace: the nodes only read from the API server, on loopback.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nodes="${1:-100}"
cd "$root"
integration-tests/apiserver/build.sh >/dev/null
cache="${NFTPROXY_TEST_CACHE:-$HOME/.cache/nftproxy}"
bin="$cache/fleet-client-go/fleet-client-go"
(
    cd benchmarks/fleet-client-go
    export GOMODCACHE="$cache/go-mod" GOCACHE="$cache/fleet-client-go/go-build" GOFLAGS=-modcacherw GOTOOLCHAIN=local CGO_ENABLED=0
    PATH="$PATH:/usr/local/go/bin" go build -o "$bin" .
)
./mvnw -B -ntp test -pl integration-tests -am -Dtest=FleetBench -Dsurefire.failIfNoSpecifiedTests=false \
    -Dfleet.nodes="$nodes" -Dfleet.sides="${SIDES:-nftproxy,client-go}" -Dfleet.clientGo="$bin" \
    -Dfleet.services="${SERVICES:-1000}" -Dfleet.changes="${CHANGES:-1000}" -Dfleet.idleSeconds="${IDLE:-60}" \
    | grep -E '^(RESULT|populated|fleet:|phase \||audit log|    requests:|[a-z0-9 ,-]+ \| [0-9])'
