#!/usr/bin/env bash
# Builds the release's OCI image archive nftproxy-VERSION-linux-ARCH.oci.tar from the release tarball, with no
# container daemon, builder or registry (oci-image.py writes the archive):
#   /opt/nftproxy/runtime/     the tarball's Java runtime (jlink, with its base class-data archive)
#   /opt/nftproxy/nftproxy.jar the tarball's jar
#   /opt/nftproxy/jvm.args     the JVM options of nftproxy-jvm.sh and "-jar /opt/nftproxy/nftproxy.jar", a java @file
#   libnftables and every shared library it and the runtime link against, copied from this machine as ldd lists them,
#   so the daemon drives nftables in-process as on a host; no shell, no package manager, no nft binary.
# The entry point is the nftproxy CLI (java @/opt/nftproxy/jvm.args), so a container's args are nftproxy's
# (`run --config …`), as with the kube-proxy image; deploy/nftproxy.yaml spells the same command out.
#
#   release/build-image.sh TARBALL OUT_DIR [REF]    # REF: the name inside the archive, default localhost/nftproxy:VERSION
#   release/build-image.sh release/target release/target     # a directory: the one release tarball in it
#
# Called by the release module's package phase after build-tarball.sh (-Dnftproxy.image.skip=true leaves it out).
# Needs python3, ldd and libnftables1 on the build machine (Debian: apt-get install libnftables1 python3).
# Prints the image reference on its last line. About 10 s.
set -euo pipefail

tarball="${1:?usage: build-image.sh TARBALL OUT_DIR [REF]}"
out="${2:?usage: build-image.sh TARBALL OUT_DIR [REF]}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf '[release-image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [[ -d "$tarball" ]]; then
    found=("$tarball"/nftproxy-*-linux-*.tar.gz)
    [[ ${#found[@]} -eq 1 && -f "${found[0]}" ]] || { log "not one release tarball in $tarball: ${found[*]}"; exit 1; }
    tarball="${found[0]}"
fi
name="$(basename "$tarball" .tar.gz)"
[[ -f "$tarball" && "$name" =~ ^nftproxy-(.+)-linux-([a-z0-9_]+)$ ]] \
    || { log "not a release tarball (nftproxy-VERSION-linux-ARCH.tar.gz): $tarball"; exit 1; }
version="${BASH_REMATCH[1]}"
arch="${BASH_REMATCH[2]}"
ref="${3:-localhost/nftproxy:$version}"
command -v python3 >/dev/null || { log "python3 is needed to write the archive"; exit 1; }
# ldconfig's name for this architecture's libraries, as its cache lists them.
case "$arch" in
    amd64) abi="libc6,x86-64" ;;
    arm64) abi="libc6,AArch64" ;;
    *) log "no image for architecture $arch (amd64 and arm64 are known)"; exit 1 ;;
esac
nftables_lib="$(/sbin/ldconfig -p | sed -n "s/^[[:space:]]*libnftables\.so\.1 ($abi) => //p" | head -1)"
[[ -n "$nftables_lib" ]] || { log "libnftables.so.1 not found (Debian: apt-get install libnftables1)"; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/nftproxy-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
release="$work/$name"
root="$work/root"
mkdir -p "$root/opt/nftproxy" "$root/tmp" "$root/etc" "$root/run" "$root/proc" "$root/var/lib/kube-proxy"
chmod 1777 "$root/tmp"
mv "$release/lib/nftproxy/runtime" "$root/opt/nftproxy/runtime"
install -m 0644 "$release/lib/nftproxy/nftproxy.jar" "$root/opt/nftproxy/nftproxy.jar"
[[ -f "$root/opt/nftproxy/runtime/lib/server/classes.jsa" ]] || { log "the runtime has no base class-data archive"; exit 1; }

# The launcher's JVM options, for a command other than run: the daemon's own class-data archive would be written into
# the container's layer and lost with it, while the runtime's base archive is mapped without asking.
. "$release/lib/nftproxy/nftproxy-jvm.sh"
{ nftproxy_jvm_flags /opt/nftproxy/nftproxy.jar "" | tr ' ' '\n'; printf '\n-jar\n/opt/nftproxy/nftproxy.jar\n'; } \
    >"$root/opt/nftproxy/jvm.args"

# Every shared library the runtime and libnftables need, at the same paths as here.
copy_lib() { local f=$1; [[ -e "$root$f" ]] && return 0; mkdir -p "$root$(dirname "$f")"; cp -L "$f" "$root$f"; }
{ find "$root/opt/nftproxy/runtime" -type f \( -name '*.so' -o -path '*/bin/java' \) -exec ldd {} \; 2>/dev/null
  ldd "$nftables_lib"; } \
  | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | grep -v "^$root/" | sort -u \
  | while read -r f; do copy_lib "$f"; done   # the runtime's own libraries are in place already
copy_lib "$nftables_lib"
loader="$(ldd "$root/opt/nftproxy/runtime/bin/java" | sed -n 's/^[[:space:]]*\(\/[^ ]*ld-linux[^ ]*\) (.*/\1/p' | head -1)"
[[ -n "$loader" && -e "$root$loader" ]] || { log "the dynamic loader was not among ldd's answers"; exit 1; }
echo 'root:x:0:0:root:/:/nonexistent' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
echo 'hosts: files dns' >"$root/etc/nsswitch.conf"

# The image's own runtime, libraries and options run the jar: in a chroot no library of this machine's is reachable,
# and a /proc of its own gives the loader the path of java's libraries ($ORIGIN), as a container's does.
if [[ $EUID -eq 0 ]] && command -v unshare >/dev/null; then
    mkdir -p "$root/proc"
    unshare --mount --pid --fork --mount-proc="$root/proc" \
        chroot "$root" /opt/nftproxy/runtime/bin/java @/opt/nftproxy/jvm.args --version >/dev/null \
        || { log "the image's java does not run the jar in a chroot of the image"; exit 1; }
fi

mkdir -p "$out"
archive="$out/$name.oci.tar"
# One archive in the output, as with the tarball.
rm -f "$out"/nftproxy-*-linux-*.oci.tar
python3 "$here/oci-image.py" "$root" "$ref" "$archive" --arch "$arch" \
    --gzip --entrypoint /opt/nftproxy/runtime/bin/java --entrypoint @/opt/nftproxy/jvm.args --cmd=--help >/dev/null
log "$archive: $ref, $(du -h "$archive" | cut -f1)"
echo "$ref"
