#!/usr/bin/env bash
# Writes nftproxy as an OCI image archive, without a registry or a container builder:
#   /opt/java      a jlink'd Java runtime holding only the modules the jar uses (jdeps decides)
#   /opt/nftproxy  the jar
#   libnftables and every shared library it and the runtime link against, copied from this machine (ldd), so
#   the daemon drives nftables in-process as on a host; no shell, no package manager, no nft binary.
#
#   integration-tests/node/nftproxy-image.sh OUT.tar [REF]     # REF defaults to local.test/nftproxy:<version>
#
# Needs a JDK (jlink, jdeps) and libnftables1 on the build machine; builds the jar through ./nftproxy when stale.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
out=${1:?usage: nftproxy-image.sh OUT.tar [REF]}
log() { printf '[nftproxy-image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

version=$("$REPO/nftproxy" --version | awk '{print $2}')   # builds the jar when a source is newer
ref=${2:-local.test/nftproxy:$version}
jar="$REPO/proxy-daemon/target/nftproxy.jar"
lib=$(ldconfig -p | sed -n 's/^[[:space:]]*libnftables\.so\.1 (libc6,x86-64) => //p' | head -1)
[[ -n "$lib" ]] || { log "libnftables.so.1 not found (apt-get install libnftables1)"; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/nftp-image.XXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/opt/nftproxy" "$root/tmp" "$root/etc" "$root/run" "$root/var/lib/kube-proxy"
chmod 1777 "$root/tmp"
cp "$jar" "$root/opt/nftproxy/nftproxy.jar"
# jdeps misses the modules reached by reflection or service loading: TLS's elliptic curves and the DNS resolver.
mods=$(jdeps --multi-release 17 --ignore-missing-deps --print-module-deps "$jar" 2>/dev/null)
mods="$mods,jdk.crypto.ec,jdk.naming.dns,jdk.unsupported"
log "jlink: $mods"
jlink --add-modules "$mods" --strip-debug --no-header-files --no-man-pages --compress=2 --output "$root/opt/java"

# Every shared library the runtime and libnftables need, at the same paths as here.
copy_lib() { local f=$1; [[ -e "$root$f" ]] && return 0; mkdir -p "$root$(dirname "$f")"; cp -L "$f" "$root$f"; }
{ find "$root/opt/java" -type f \( -name '*.so' -o -path '*/bin/java' \) -exec ldd {} \; 2>/dev/null; ldd "$lib"; } \
  | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | grep -v "^$root/" | sort -u \
  | while read -r f; do copy_lib "$f"; done   # the runtime's own libraries are in place already
copy_lib "$lib"
[[ -e "$root/lib64/ld-linux-x86-64.so.2" ]] || { log "the dynamic loader was not among ldd's answers"; exit 1; }
echo 'root:x:0:0:root:/:/nonexistent' > "$root/etc/passwd"
echo 'hosts: files dns' > "$root/etc/nsswitch.conf"

"$root/opt/java/bin/java" -jar "$root/opt/nftproxy/nftproxy.jar" --version >/dev/null   # the runtime runs the jar
# The entry point is the CLI itself, so a pod's args are nftproxy's (`run --config …`), as with the kube-proxy image.
python3 "$HERE/oci-image.py" "$root" "$ref" "$out" --entrypoint /opt/java/bin/java --entrypoint=-XX:+UseSerialGC \
  --entrypoint=-jar --entrypoint /opt/nftproxy/nftproxy.jar --cmd=--help >&2
[[ -s "$out" ]] || { log "no archive written"; exit 1; }
log "$out: $ref, $(du -h "$out" | cut -f1)"
echo "$ref"
