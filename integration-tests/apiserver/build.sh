#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy into a cache directory outside the clone,
# so integration tests can run against a real API server. Nothing here is downloaded from GitHub or
# Kubernetes' release downloads: only the Go module proxy (GOPROXY) is needed.
#
#   integration-tests/apiserver/build.sh            # build once, print the bin directory
#   K8S_VERSION=v1.36.3 NFTPROXY_TEST_CACHE=/x ...  # override release / cache root
#   integration-tests/apiserver/build.sh kube-proxy # other k8s.io/kubernetes commands instead (the side-by-side
#                                                   # benchmark's upstream kube-proxy), into the same bin directory
#
# Idempotent: when both binaries already exist and answer --version, it only prints the directory.
# The last line of stdout is always the bin directory (callers read it).
set -Eeuo pipefail

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
CACHE_ROOT="${NFTPROXY_TEST_CACHE:-$HOME/.cache/nftproxy}"
DIR="$CACHE_ROOT/k8s-$K8S_VERSION"
BIN="$DIR/bin"
# Go's module and build caches live beside the versioned dirs so one directory holds everything a CI
# cache needs to keep; the build cache is dropped after a successful build (it is several GiB).
export GOMODCACHE="${GOMODCACHE_OVERRIDE:-$CACHE_ROOT/go-mod}"
export GOCACHE="$DIR/work/go-build"
export GOFLAGS="-modcacherw"
# The kubernetes go.mod asks for a go 1.26 toolchain; never let go fetch a different one.
export GOTOOLCHAIN=local
export CGO_ENABLED=0
# Only used when the go on PATH is older than kubernetes' go directive.
GO_MIN="${NFTPROXY_GO_MIN:-1.26.0}"
GO_TOOLCHAIN="${NFTPROXY_GO_TOOLCHAIN:-go1.26.8}"
PATH="$PATH:/usr/local/go/bin"

step=""
log() { printf '[apiserver-build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# With set -E the trap also fires inside $(...) subshells; report once, from the script itself.
fail() { [[ $BASHPID == "$$" ]] && log "FAILED during: $step"; exit 1; }
# go mod download -json reports its error inside the JSON on stdout.
json_error() { printf '%s' "$1" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p'; }
trap fail ERR

# Other commands of k8s.io/kubernetes, when named: built from the same throwaway module, without etcd.
COMMANDS=("$@")
for c in "${COMMANDS[@]}"; do
  [[ "$c" =~ ^kube-[a-z-]+$ ]] || { log "not a k8s.io/kubernetes command: $c"; exit 2; }
done

binaries_ok() {
  if ((${#COMMANDS[@]})); then
    for c in "${COMMANDS[@]}"; do "$BIN/$c" --version >/dev/null 2>&1 || return 1; done
    return 0
  fi
  [[ -x "$BIN/kube-apiserver" && -x "$BIN/etcd" ]] \
    && "$BIN/kube-apiserver" --version >/dev/null 2>&1 \
    && "$BIN/etcd" --version >/dev/null 2>&1
}

if ((${#COMMANDS[@]})) && binaries_ok; then
  log "cached: ${COMMANDS[*]} $K8S_VERSION"
  echo "$BIN"
  exit 0
fi
if binaries_ok; then
  log "cached: $("$BIN/kube-apiserver" --version), etcd $("$BIN/etcd" --version | sed -n 's/^etcd Version: //p')"
  echo "$BIN"
  exit 0
fi

step="checking the Go toolchain"
command -v go >/dev/null || { log "go not found (expected in PATH or /usr/local/go/bin; Debian's golang-go is enough)"; false; }
have=$(go env GOVERSION 2>/dev/null || go version | awk '{print $3}')
if [[ "$(printf '%s\n%s\n' "${have#go}" "$GO_MIN" | sort -V | head -1)" != "$GO_MIN" ]]; then
  # Kubernetes needs a newer Go than Debian ships. The toolchain is itself a module on the Go module proxy;
  # any go that speaks modules (Debian's 1.19 does) downloads it and checks it against the checksum database.
  step="fetching the $GO_TOOLCHAIN toolchain module (have $have, need >= go$GO_MIN)"
  log "$step"
  if ! tc_json=$(GOTOOLCHAIN=local GOFLAGS=-modcacherw go mod download -json "golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-amd64"); then
    log "go: $(json_error "$tc_json")"; false
  fi
  tc_dir=$(printf '%s' "$tc_json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [[ -d "$tc_dir/bin" ]] || { log "no toolchain directory in: $tc_json"; false; }
  # Module zips carry no file modes.
  chmod +x "$tc_dir"/bin/* "$tc_dir"/pkg/tool/*/*
  PATH="$tc_dir/bin:$PATH"
fi
log "$(go version); GOPROXY=$(go env GOPROXY); cache $DIR"

# One core for the compiler by default: the machine is shared and the link step alone needs ~2 GiB.
PARALLEL="${NFTPROXY_BUILD_PARALLEL:-1}"
start=$(date +%s)
mkdir -p "$DIR/work/apiserver" "$DIR/work/etcd" "$BIN"

step="downloading k8s.io/kubernetes@$K8S_VERSION's go.mod"
cd "$DIR/work/apiserver"
if ! gomod_json=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION"); then
  log "go: $(json_error "$gomod_json")"; false
fi
kube_gomod=$(printf '%s' "$gomod_json" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[[ -f "$kube_gomod" ]] || { log "no go.mod path in: $gomod_json"; false; }
go_directive=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$kube_gomod")
# The staging modules (k8s.io/api, apimachinery, client-go, ...) are required as v0.0.0 and replaced by
# ./staging paths that are not part of the module zip; each is published separately as v0.<minor>.<patch>.
staging_version="v0.${K8S_VERSION#v1.}"
etcd_version=$(sed -n 's/^[[:space:]]*go\.etcd\.io\/etcd\/server\/v3 \(v[^ ]*\).*$/\1/p' "$kube_gomod" | head -1)
[[ -n "$etcd_version" ]] || { log "kubernetes go.mod names no go.etcd.io/etcd/server/v3 version"; false; }
log "kubernetes $K8S_VERSION (go $go_directive), staging modules $staging_version, etcd $etcd_version"

step="writing the throwaway kube-apiserver module"
{
  echo "module nftproxy.test/apiserver-build"
  echo
  echo "go $go_directive"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/[a-z0-9-]*$#\t\1 => \1 '"$staging_version"'#p' "$kube_gomod"
  echo ")"
} > go.mod
replaces=$(grep -c '=> k8s.io/' go.mod || true)
[[ "$replaces" -gt 10 ]] || { log "only $replaces staging replace lines generated from $kube_gomod"; false; }
{
  echo "//go:build tools"
  echo
  echo "// Pins the main packages built here into this module's dependency graph."
  echo "package tools"
  echo
  for c in kube-apiserver "${COMMANDS[@]}"; do echo "import _ \"k8s.io/kubernetes/cmd/$c\""; done
} > tools.go

step="resolving kube-apiserver's dependencies (go mod tidy)"
log "$step, $replaces staging replace lines"
nice -n 10 go mod tidy

# The version stamps feed /version; the compatibility-version logic uses constants compiled into
# component-base, so an unstamped binary would still serve, but clients log "v0.0.0-master".
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

if ((${#COMMANDS[@]})); then
  for c in "${COMMANDS[@]}"; do
    step="compiling $c (go build -p $PARALLEL)"
    log "$step"
    t0=$(date +%s)
    nice -n 10 go build -p "$PARALLEL" -trimpath -ldflags="$ldflags" -o "$BIN/$c.tmp" "k8s.io/kubernetes/cmd/$c"
    mv "$BIN/$c.tmp" "$BIN/$c"
    log "$c built in $(( $(date +%s) - t0 )) s"
  done
  binaries_ok || { log "a built binary does not answer --version"; false; }
  [[ -n "${NFTPROXY_KEEP_GO_CACHE:-}" ]] || rm -rf "$GOCACHE"
  echo "$BIN"
  exit 0
fi

step="compiling kube-apiserver (go build -p $PARALLEL)"
log "$step; this is the long part"
t0=$(date +%s)
nice -n 10 go build -p "$PARALLEL" -trimpath -ldflags="$ldflags" -o "$BIN/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$BIN/kube-apiserver.tmp" "$BIN/kube-apiserver"
log "kube-apiserver built in $(( $(date +%s) - t0 )) s"

step="writing the throwaway etcd module"
cd "$DIR/work/etcd"
cat > go.mod <<EOF
module nftproxy.test/etcd-build

go $go_directive

require go.etcd.io/etcd/server/v3 $etcd_version
EOF
cat > main.go <<'EOF'
// The etcd server binary: go.etcd.io/etcd/server/v3 ships the entry point as a library package.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF

step="resolving etcd's dependencies (go mod tidy)"
nice -n 10 go mod tidy

step="compiling etcd (go build -p $PARALLEL)"
log "$step"
t0=$(date +%s)
nice -n 10 go build -p "$PARALLEL" -trimpath -ldflags="-s -w" -o "$BIN/etcd.tmp" .
mv "$BIN/etcd.tmp" "$BIN/etcd"
log "etcd built in $(( $(date +%s) - t0 )) s"

step="checking the built binaries"
binaries_ok || { log "a built binary does not answer --version"; false; }
log "disk: bin $(du -sh "$BIN" | cut -f1), go build cache $(du -sh "$GOCACHE" | cut -f1), module cache $(du -sh "$GOMODCACHE" | cut -f1)"
if [[ -z "${NFTPROXY_KEEP_GO_CACHE:-}" ]]; then
  rm -rf "$GOCACHE"
fi
log "done in $(( $(date +%s) - start )) s: $("$BIN/kube-apiserver" --version), etcd $etcd_version"
echo "$BIN"
