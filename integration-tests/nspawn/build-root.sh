#!/usr/bin/env bash
# Builds the Debian root filesystem that SystemdUnitNspawnTest boots with systemd-nspawn (a real systemd as PID 1,
# to run nftproxy.service under), once, into a cache directory outside the clone:
#   integration-tests/nspawn/build-root.sh     # prints the root's directory as the last line of stdout
# Needs root and debootstrap; takes about a minute or three. Idempotent: an existing root is only printed. The test
# never writes to the root (it boots it with --volatile=overlay), so one root serves every run.
#   NFTPROXY_TEST_CACHE   cache root (default ~/.cache/nftproxy, beside the API server build)
#   NFTPROXY_DEBIAN_MIRROR  the mirror (default: the first one apt uses on this machine)
set -euo pipefail

CACHE_ROOT="${NFTPROXY_TEST_CACHE:-$HOME/.cache/nftproxy}"
ROOT="$CACHE_ROOT/nspawn-root"
SUITE=bookworm
# What the test needs inside: systemd and D-Bus to run units, nft and conntrack to look at the kernel's state,
# passwd for useradd (install.sh), python3 for no reason but a shell-free HTTP probe when debugging by hand.
PACKAGES=systemd,dbus,iproute2,nftables,conntrack,procps,passwd,python3-minimal

log() { printf '[nspawn-root %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [[ -x "$ROOT/usr/lib/systemd/systemd" && -x "$ROOT/usr/sbin/nft" ]]; then
    log "cached: $ROOT"
    echo "$ROOT"
    exit 0
fi
[[ $EUID -eq 0 ]] || { log "needs root (debootstrap)"; exit 1; }
command -v debootstrap >/dev/null || { log "debootstrap not installed (apt-get install debootstrap)"; exit 1; }

mirror="${NFTPROXY_DEBIAN_MIRROR:-}"
if [[ -z "$mirror" ]]; then
    mirror="$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1 || true)"
fi
if [[ -z "$mirror" ]]; then
    mirror="$(awk '$1 == "deb" && $3 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"
fi
[[ -n "$mirror" ]] || { log "no Debian mirror found in apt's sources; set NFTPROXY_DEBIAN_MIRROR"; exit 1; }

mkdir -p "$CACHE_ROOT"
rm -rf "$ROOT.partial"
start=$SECONDS
log "debootstrap $SUITE from $mirror into $ROOT"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT.partial" "$mirror" >"$CACHE_ROOT/nspawn-root.log" 2>&1 \
    || { log "debootstrap FAILED; see $CACHE_ROOT/nspawn-root.log"; tail -20 "$CACHE_ROOT/nspawn-root.log" >&2; exit 1; }
# No getty on a console nobody reads, and no waiting for a network that the test's namespace does not route.
rm -f "$ROOT.partial/etc/systemd/system/getty.target.wants/"*
rm -rf "$ROOT"
mv "$ROOT.partial" "$ROOT"
log "built in $((SECONDS - start)) s: $ROOT"
echo "$ROOT"
