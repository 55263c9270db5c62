#!/bin/sh
# nftproxy launcher of an installed or unpacked release (/usr/local/bin/nftproxy after install.sh; bin/nftproxy in the
# release tarball). Everything it needs is in ../lib/nftproxy next to it: the jar, the JVM options and, in a release,
# the Java runtime made for it by jlink, so no system Java is needed. Without a bundled runtime (installed from a
# checkout) it uses $JAVA or the java on PATH.
# exec, not fork: the unit's NotifyAccess=main accepts sd_notify messages only from the main process, which must
# therefore be the JVM itself.
set -e
self="$(readlink -f "$0")"
lib="$(cd "$(dirname "$self")/../lib/nftproxy" && pwd)"
java="$lib/runtime/bin/java"
[ -x "$java" ] || java="${JAVA:-java}"
# JVM flags: nftproxy-jvm.sh (heap, GC, JIT, class-data sharing); NFTPROXY_JAVA_OPTS overrides any of them
# (another collector only after -XX:-UseSerialGC: the JVM refuses to start with two).
. "$lib/nftproxy-jvm.sh"
# shellcheck disable=SC2046 # the flags are words by design; none holds a space
exec "$java" $(nftproxy_jvm_flags "$lib/nftproxy.jar" "${1:-}" "$java") ${NFTPROXY_JAVA_OPTS:-} -jar "$lib/nftproxy.jar" "$@"
