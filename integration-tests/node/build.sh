#!/usr/bin/env bash
# Builds and caches everything the single-node harness (run.sh) needs, beside the API server build:
#   Go binaries from the Go module proxy: kubelet, kube-controller-manager, kube-scheduler, kube-proxy, kubectl,
#   e2e.test, agnhost, regression-issue-74839, coredns, CNI plugins (bridge, loopback, host-local, portmap);
#   OCI image archives built without a registry: pause, agnhost, busybox, glibc-dns-testing, coredns,
#   regression-issue-74839, distroless-iptables.
# containerd and runc come from Debian's archive (apt-get, see run.sh's requirements / .ci notes).
#
#   integration-tests/node/build.sh          # build what is missing, print the cache directory (last line)
#   NODE_BUILD_ONLY="kubelet kubectl" ...    # build only some pieces
#
# Each piece is idempotent and logs its own build time; the Go build cache is deleted at the end.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
CNI_VERSION="${CNI_VERSION:-v1.10.0}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
CACHE_ROOT="${NFTPROXY_TEST_CACHE:-$HOME/.cache/nftproxy}"
DIR="$CACHE_ROOT/node-$K8S_VERSION"
BIN="$DIR/bin"; IMG="$DIR/images"; CNIBIN="$DIR/cni-bin"; WORKD="$DIR/work"
export GOMODCACHE="${GOMODCACHE_OVERRIDE:-$CACHE_ROOT/go-mod}"
# NFTPROXY_GOCACHE: start from another build's cache (CI passes the API server build's: most k8s.io packages are shared).
export GOCACHE="${NFTPROXY_GOCACHE:-$WORKD/go-build}"
export GOFLAGS="-modcacherw"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOMAXPROCS="${NFTPROXY_BUILD_PARALLEL:-1}"
PARALLEL="${NFTPROXY_BUILD_PARALLEL:-1}"
PATH="$PATH:/usr/local/go/bin"
ONLY="${NODE_BUILD_ONLY:-}"

step=""
log() { printf '[node-build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
fail() { [[ $BASHPID == "$$" ]] && log "FAILED during: $step"; exit 1; }
trap fail ERR
want() { [[ -z "$ONLY" || " $ONLY " == *" $1 "* ]]; }
timed() { # NAME CMD...: runs CMD, appends "NAME seconds" to the timings file
  local name=$1 t0; shift; t0=$(date +%s)
  "$@"
  local dt=$(( $(date +%s) - t0 ))
  echo "$name $dt" >> "$DIR/timings.txt"; log "$name done in $dt s"
}
gobuild() { nice -n 19 go build -p "$PARALLEL" -trimpath "$@"; }

mkdir -p "$BIN" "$IMG" "$CNIBIN" "$WORKD"

step="checking the Go toolchain"
command -v go >/dev/null || { log "go not found (expected in PATH or /usr/local/go/bin; Debian's golang-go is enough)"; false; }
GO_MIN="${NFTPROXY_GO_MIN:-1.26.0}"; GO_TOOLCHAIN="${NFTPROXY_GO_TOOLCHAIN:-go1.26.8}"
have=$(go env GOVERSION 2>/dev/null || go version | awk '{print $3}')
if [[ "$(printf '%s\n%s\n' "${have#go}" "$GO_MIN" | sort -V | head -1)" != "$GO_MIN" ]]; then
  # An older go (Debian's) fetches the toolchain module, as the API server build does; after that build it is cached.
  step="fetching the $GO_TOOLCHAIN toolchain module (have $have, need >= go$GO_MIN)"; log "$step"
  tc_dir=$(GOTOOLCHAIN=local go mod download -json "golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-amd64" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [[ -d "$tc_dir/bin" ]] || { log "no toolchain directory for $GO_TOOLCHAIN"; false; }
  chmod +x "$tc_dir"/bin/* "$tc_dir"/pkg/tool/*/*   # module zips carry no file modes
  PATH="$tc_dir/bin:$PATH"
fi
log "$(go version); cache $DIR"

# ---- the Kubernetes module: build.sh's staging-replace go.mod, generated the same way -------------------------
kmod_setup() { # DIR TOOLS_IMPORTS...
  local d=$1; shift
  mkdir -p "$d"; cd "$d"
  local j gomod gover staging
  j=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION")
  gomod=$(printf '%s' "$j" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  KDIR=$(printf '%s' "$j" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  gover=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")
  staging="v0.${K8S_VERSION#v1.}"
  if [[ ! -f go.sum ]]; then
    {
      printf 'module nftproxy.test/%s\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$(basename "$d")" "$gover" "$K8S_VERSION"
      sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/[a-z0-9-]*$#\t\1 => \1 '"$staging"'#p' "$gomod"
      echo ")"
    } > go.mod
    { printf '//go:build tools\n\n// Pins the packages this harness builds into the module graph.\npackage tools\n\nimport (\n'
      for p in "$@"; do printf '\t_ "%s"\n' "$p"; done; echo ")"; } > tools.go
    nice -n 10 go mod tidy
  fi
}
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

NODE_CMDS="kubelet kube-controller-manager kube-scheduler kube-proxy kubectl"
need_node=""
for c in $NODE_CMDS; do want "$c" && [[ ! -x "$BIN/$c" ]] && need_node=1; done
if [[ -n "$need_node" ]]; then
  step="resolving the node binaries' module"
  kmod_setup "$WORKD/node-bins" $(for c in $NODE_CMDS; do echo "k8s.io/kubernetes/cmd/$c"; done)
  for c in $NODE_CMDS; do
    want "$c" && [[ ! -x "$BIN/$c" ]] || continue
    step="compiling $c"; log "$step"
    timed "$c" gobuild -ldflags="$LDFLAGS" -o "$BIN/$c.tmp" "k8s.io/kubernetes/cmd/$c"
    mv "$BIN/$c.tmp" "$BIN/$c"
  done
fi

# e2e.test needs the test-only imports of test/e2e/e2e_test.go in the graph, so go mod tidy sees them.
if { want e2e.test && [[ ! -x "$BIN/e2e.test" ]]; } || { want agnhost && [[ ! -x "$BIN/agnhost" ]]; } \
    || { want boom-server && [[ ! -x "$BIN/regression-issue-74839" ]]; }; then
  step="resolving the e2e module"
  kmod_setup "$WORKD/e2e" k8s.io/kubernetes/test/e2e k8s.io/kubernetes/test/images/agnhost \
    github.com/onsi/ginkgo/v2 k8s.io/component-base/version k8s.io/klog/v2 \
    k8s.io/kubernetes/test/e2e/framework k8s.io/kubernetes/test/e2e/framework/config \
    k8s.io/kubernetes/test/e2e/framework/testfiles k8s.io/kubernetes/test/e2e/framework/debug/init \
    k8s.io/kubernetes/test/e2e/framework/metrics/init k8s.io/kubernetes/test/e2e/framework/node/init \
    k8s.io/kubernetes/test/e2e/network k8s.io/kubernetes/test/e2e/testing-manifests \
    k8s.io/kubernetes/test/conformance/testdata k8s.io/kubernetes/test/fixtures k8s.io/kubernetes/test/utils/format
  if want agnhost && [[ ! -x "$BIN/agnhost" ]]; then
    step="compiling agnhost"; log "$step"
    timed agnhost gobuild -ldflags="-s -w" -o "$BIN/agnhost.tmp" k8s.io/kubernetes/test/images/agnhost
    mv "$BIN/agnhost.tmp" "$BIN/agnhost"
  fi
  # The conntrack test "invalid conntrack state bug" runs it as its boom-server (its only import, k8s.io/utils, is
  # already in the module's graph).
  if want boom-server && [[ ! -x "$BIN/regression-issue-74839" ]]; then
    step="compiling regression-issue-74839"; log "$step"
    timed regression-issue-74839 gobuild -ldflags="-s -w" -o "$BIN/regression-issue-74839.tmp" \
      k8s.io/kubernetes/test/images/regression-issue-74839
    mv "$BIN/regression-issue-74839.tmp" "$BIN/regression-issue-74839"
  fi
  if want e2e.test && [[ ! -x "$BIN/e2e.test" ]]; then
    step="compiling e2e.test (go test -c)"; log "$step; the longest piece"
    timed e2e.test nice -n 19 go test -c -vet=off -p "$PARALLEL" -trimpath -ldflags="$LDFLAGS" -o "$BIN/e2e.test.tmp" k8s.io/kubernetes/test/e2e
    mv "$BIN/e2e.test.tmp" "$BIN/e2e.test"
  fi
fi

# hosts: the DNS tests' own name server ("configurable pod resolv.conf") is this binary, run from the agnhost image
# as /coredns with a Corefile of hosts and log. forward: the "DNS configMap" tests rewrite the cluster's Corefile to
# forward a stub domain (and everything else) to such a name server in a pod, then restart CoreDNS; without the
# plugin CoreDNS refuses that Corefile and the kube-dns Service has no endpoints. A changed plugin list rebuilds it
# (and the images holding it).
COREDNS_PLUGINS="cache errors forward health hosts kubernetes loadbalance log ready whoami"
if want coredns && [[ ! -x "$BIN/coredns" || "$(cat "$BIN/coredns.plugins" 2>/dev/null)" != "$COREDNS_PLUGINS" ]]; then
  step="building coredns $COREDNS_VERSION"; log "$step"
  mkdir -p "$WORKD/coredns"; cd "$WORKD/coredns"
  if [[ ! -f go.sum || "$(cat plugins 2>/dev/null)" != "$COREDNS_PLUGINS" ]]; then
    gover=$(go env GOVERSION); gover=${gover#go}
    printf 'module nftproxy.test/coredns-build\n\ngo %s\n\nrequire github.com/coredns/coredns %s\n' "${gover%.*}.0" "$COREDNS_VERSION" > go.mod
    { echo '// A CoreDNS with only the plugins a single test node needs.'; echo 'package main'; echo; echo 'import ('
      echo '	"github.com/coredns/coredns/coremain"'
      for p in $COREDNS_PLUGINS; do echo "	_ \"github.com/coredns/coredns/plugin/$p\""; done
      echo ')'; echo; echo 'func main() { coremain.Run() }'; } > main.go
    nice -n 10 go mod tidy
    echo "$COREDNS_PLUGINS" > plugins
  fi
  timed coredns gobuild -ldflags="-s -w" -o "$BIN/coredns.tmp" .
  mv "$BIN/coredns.tmp" "$BIN/coredns"
  echo "$COREDNS_PLUGINS" > "$BIN/coredns.plugins"
  rm -f "$IMG/coredns.tar"
fi

if want cni && [[ ! -x "$CNIBIN/portmap" ]]; then
  step="building the CNI plugins $CNI_VERSION"; log "$step"
  cni() { for p in main/bridge main/loopback ipam/host-local meta/portmap; do
      GOBIN="$CNIBIN" nice -n 19 go install -p "$PARALLEL" -trimpath "github.com/containernetworking/plugins/plugins/$p@$CNI_VERSION"; done; }
  timed cni cni
fi

# ---- images, written as OCI archives by oci-image.py (no registry, no container builder) --------------------
apt_mirror() { # the first non-security Debian archive URI of apt's own sources (deb822 or one-line form)
  local f
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
    [[ -r "$f" ]] && sed -n 's/^URIs: *\(http[^ ]*\).*/\1/p; s/^deb  *\(http[^ ]*\) .*/\1/p' "$f"
  done | grep debian | grep -v security | head -1 || true
}
if want images; then
  # Image names and tags are the ones e2e.test itself asks for (its --list-images), so nothing here hard-codes them.
  step="reading the image list of e2e.test"
  [[ -x "$BIN/e2e.test" ]] || { log "e2e.test must be built before the images"; false; }
  "$BIN/e2e.test" --list-images > "$IMG/e2e-images.txt"
  # Every tag the list has for an image of the main registry goes on the one archive (agnhost and busybox each have
  # two); the copies under other registries are the ones tests expect to fail pulling.
  refs_of() { local r; r=$(grep -E "^registry\.k8s\.io/(e2e-test-images/|build-image/)?$1:[^/]*\$" "$IMG/e2e-images.txt" | paste -sd,) \
      && [[ -n "$r" ]] || { log "e2e.test lists no registry.k8s.io image named $1"; false; }; echo "$r"; }
  PAUSE_REF=$(refs_of pause); AGNHOST_REF=$(refs_of agnhost); BUSYBOX_REF=$(refs_of busybox); DNSTEST_REF=$(refs_of glibc-dns-testing)
  [[ "$PAUSE_REF" != *,* ]] || { log "more than one pause image listed: $PAUSE_REF"; false; }
  echo "$PAUSE_REF" > "$IMG/pause.ref"
  if [[ ! -f "$IMG/pause.tar" ]]; then
    step="building the pause image"; log "$step"
    [[ -n "${KDIR:-}" ]] || KDIR=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    rm -rf "$WORKD/pause-root"; mkdir -p "$WORKD/pause-root"
    command -v gcc >/dev/null || { log "gcc is needed for the pause image"; false; }
    gcc -Os -static -DVERSION="v${PAUSE_REF##*:}" -o "$WORKD/pause-root/pause" "$KDIR/build/pause/linux/pause.c"
    python3 "$HERE/../../release/oci-image.py" "$WORKD/pause-root" "$PAUSE_REF" "$IMG/pause.tar" --entrypoint /pause
  fi
  root="$WORKD/testroot"
  # The tests run these tools inside the pods (wget: the host-exec pods' service checks, in busybox upstream).
  pkgs=curl,wget,netcat-openbsd,iproute2,dnsutils,iputils-ping,bash,ca-certificates
  if [[ ! -f "$IMG/agnhost.tar" || ! -f "$IMG/busybox.tar" || ! -f "$IMG/glibc-dns-testing.tar" \
        || "$(cat "$root/.nftp-packages" 2>/dev/null)" != "$pkgs" ]] || ! cmp -s "$BIN/coredns" "$root/coredns"; then
    # Upstream's agnhost is Alpine plus network tools; a Debian minbase with the same tools stands in, and the same
    # root file system serves as busybox and glibc-dns-testing (only sh, nslookup/dig and friends are used).
    step="debootstrap of the test image root file system"; log "$step"
    command -v debootstrap >/dev/null || { log "debootstrap is needed (apt-get install debootstrap)"; false; }
    [[ -x "$BIN/agnhost" ]] || { log "agnhost must be built first"; false; }
    if [[ ! -x "$root/bin/bash" || "$(cat "$root/.nftp-packages" 2>/dev/null)" != "$pkgs" ]]; then
      rm -rf "$root"
      # The mirror is taken from this machine's own apt configuration.
      mirror="${DEBIAN_MIRROR:-$(apt_mirror)}"
      [[ -n "$mirror" ]] || { log "no Debian mirror found in apt's configuration; set DEBIAN_MIRROR"; false; }
      timed debootstrap nice -n 19 debootstrap --variant=minbase \
        --include="$pkgs" bookworm "$root" "$mirror"
      rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
      echo "$pkgs" > "$root/.nftp-packages"
    fi
    cp "$BIN/agnhost" "$root/agnhost"
    # Upstream's agnhost image carries /coredns too; the DNS tests start their own name server from it.
    [[ -x "$BIN/coredns" ]] || { log "coredns must be built before the agnhost image"; false; }
    cp "$BIN/coredns" "$root/coredns"
    # agnhost's porter serves its TLS ports with /localhost.crt and /localhost.key, which upstream's image carries.
    if [[ ! -s "$root/localhost.crt" ]]; then
      openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
        -keyout "$root/localhost.key" -out "$root/localhost.crt" 2>/dev/null
    fi
    python3 "$HERE/../../release/oci-image.py" "$root" "$AGNHOST_REF" "$IMG/agnhost.tar" --entrypoint /agnhost --cmd pause
    python3 "$HERE/../../release/oci-image.py" "$root" "$BUSYBOX_REF" "$IMG/busybox.tar" --cmd sh
    python3 "$HERE/../../release/oci-image.py" "$root" "$DNSTEST_REF" "$IMG/glibc-dns-testing.tar" --cmd bash
  fi
  # "KubeProxy should set TCP CLOSE_WAIT timeout" reads the node's conntrack table from a privileged hostNetwork pod
  # of the distroless-iptables image with sh, grep and sleep (/proc/net/nf_conntrack, or conntrack): the test root has them.
  if [[ ! -f "$IMG/distroless-iptables.tar" && -x "$root/bin/bash" ]]; then
    step="building the distroless-iptables image"
    python3 "$HERE/../../release/oci-image.py" "$root" "$(refs_of distroless-iptables)" "$IMG/distroless-iptables.tar" --cmd sh
  fi
  if [[ ! -f "$IMG/regression-issue-74839.tar" && -x "$BIN/regression-issue-74839" ]]; then
    step="building the regression-issue-74839 image"   # upstream's: the static binary as the entrypoint
    rm -rf "$WORKD/boom-root"; mkdir -p "$WORKD/boom-root"; cp "$BIN/regression-issue-74839" "$WORKD/boom-root/"
    python3 "$HERE/../../release/oci-image.py" "$WORKD/boom-root" "$(refs_of regression-issue-74839)" \
      "$IMG/regression-issue-74839.tar" --entrypoint /regression-issue-74839
  fi
  if [[ ! -f "$IMG/coredns.tar" && -x "$BIN/coredns" ]]; then
    step="building the coredns image"
    rm -rf "$WORKD/coredns-root"; mkdir -p "$WORKD/coredns-root"; cp "$BIN/coredns" "$WORKD/coredns-root/coredns"
    python3 "$HERE/../../release/oci-image.py" "$WORKD/coredns-root" "local.test/coredns:$COREDNS_VERSION" "$IMG/coredns.tar" --entrypoint /coredns
  fi
fi

if [[ -z "${NFTPROXY_KEEP_GO_CACHE:-}" ]]; then rm -rf "$GOCACHE"; fi
log "disk: bin $(du -sh "$BIN" | cut -f1), images $(du -sh "$IMG" | cut -f1)"
echo "$DIR"
