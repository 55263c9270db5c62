#!/usr/bin/env bash
# Builds the release tarball nftproxy-VERSION-linux-ARCH.tar.gz: a directory laid out as the installed tree
#   bin/nftproxy                launcher (the bundled runtime; no system Java)
#   lib/nftproxy/nftproxy.jar   the daemon and CLI
#   lib/nftproxy/nftproxy-jvm.sh  JVM options
#   lib/nftproxy/runtime/       a Java runtime made by jlink with the modules of jlink-modules.txt only
#   share/nftproxy/             the unit, the kernel-module list, the configuration template
#   deploy/nftproxy.yaml        the DaemonSet route: ServiceAccount, binding, ConfigMap, DaemonSet (runs the image
#                               build-image.sh makes from this tarball)
#   install.sh, README.md
# Called by the release module's package phase:  build-tarball.sh VERSION JAR OUTPUT_DIR
# jlink takes 10 s to a minute here, the rest of this step a few seconds: the runtime is kept in a cache outside the
# clone (NFTPROXY_BUILD_CACHE, default ~/.cache/nftproxy, beside the API server build) under a key of the JDK's
# version and the module list, so only a new JDK or a changed list runs jlink again, even after a clean.
set -euo pipefail

version="$1"
jar="$2"
out="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dist="$here/../systemd/src/main/dist"

log() { printf '[release %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

[[ -f "$jar" ]] || { log "jar not found: $jar"; exit 1; }
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
jlink="$java_home/bin/jlink"
[[ -x "$jlink" ]] || { log "no jlink in $java_home (a JDK, not a JRE, is needed to build the release)"; exit 1; }

# Kubernetes' and Go's names for the architecture, as in release file names elsewhere.
case "$(uname -m)" in
    x86_64) arch=amd64 ;;
    aarch64) arch=arm64 ;;
    *) arch="$(uname -m)" ;;
esac
name="nftproxy-$version-linux-$arch"

modules="$(grep -Ev '^[[:space:]]*(#|$)' "$here/jlink-modules.txt" | paste -sd, -)"
# --generate-cds-archive: the runtime's base class-data archive (lib/server/classes.jsa), made here once per cached
# runtime (about 10 s), so that the unpacked tarball and the image start with class-data sharing, and the daemon's
# own archive (nftproxy-jvm.sh) has a base to extend, with no install.sh run first.
# No --compress: the tarball's gzip compresses better, and an uncompressed module image starts faster.
jlink_options="--strip-debug --no-man-pages --no-header-files --generate-cds-archive"
key="$( ("$java_home/bin/java" -version 2>&1; echo "$modules"; echo "$jlink_options") | sha256sum | cut -c1-16)"
cache="${NFTPROXY_BUILD_CACHE:-$HOME/.cache/nftproxy}/jlink-runtime-$key"
runtime="$cache/runtime"
if [[ -x "$runtime/bin/java" ]]; then
    log "runtime cached: $runtime"
else
    rm -rf "$cache.partial"
    mkdir -p "$cache.partial"
    start=$SECONDS
    # shellcheck disable=SC2086 # options are words by design
    "$jlink" --add-modules "$modules" $jlink_options --output "$cache.partial/runtime"
    [[ -f "$cache.partial/runtime/lib/server/classes.jsa" ]] || { log "jlink made no base class-data archive"; exit 1; }
    rm -rf "$cache"
    mv "$cache.partial" "$cache"
    log "jlink: $((SECONDS - start)) s for $modules"
fi

stage="$out/release/$name"
rm -rf "$out/release"
mkdir -p "$stage/bin" "$stage/lib/nftproxy" "$stage/share/nftproxy" "$stage/deploy"
install -m 0755 "$dist/nftproxy-launcher.sh" "$stage/bin/nftproxy"
install -m 0644 "$jar" "$stage/lib/nftproxy/nftproxy.jar"
install -m 0644 "$dist/nftproxy-jvm.sh" "$stage/lib/nftproxy/nftproxy-jvm.sh"
cp -R "$runtime" "$stage/lib/nftproxy/runtime"
install -m 0644 "$dist/nftproxy.service" "$dist/nftproxy-modules.conf" "$dist/config.yaml" "$stage/share/nftproxy/"
install -m 0755 "$here/../systemd/install.sh" "$stage/install.sh"
install -m 0644 "$here/README.md" "$stage/README.md"
install -m 0644 "$here/deploy/nftproxy.yaml" "$stage/deploy/nftproxy.yaml"

start=$SECONDS
tarball="$out/$name.tar.gz"
# One tarball in the output: an older version's would be picked up by whoever looks for "the" release. The image made
# from an older tarball goes too (build-image.sh makes the new one next).
rm -f "$out"/nftproxy-*-linux-*.tar.gz "$out"/nftproxy-*-linux-*.oci.tar
# Owner root and a fixed order, so an unpack as root gives root-owned files and two builds list the same. gzip -1:
# 2 s instead of 6 here for a tarball 10 % larger.
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$out/release" -cf - "$name" | gzip -1 >"$tarball.partial"
mv "$tarball.partial" "$tarball"
log "$tarball ($(du -h "$tarball" | cut -f1), tar+gzip $((SECONDS - start)) s)"
