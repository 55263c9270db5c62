# JVM options for nftproxy, sourced by both launchers (./nftproxy in a checkout, the one install.sh writes). POSIX sh.
#
# A small long-running daemon, not a batch job: serial GC (one thread, no concurrent workers), the JIT's first tier
# only (C2 burns seconds of CPU at start for code that runs a few times a second). The heap starts at 16 MiB and grows
# with the live set (the old generation keeps 40-70 % free after a collection, the young one a third of the heap,
# 8 to 48 MiB), up to 1 GiB (45k Services x 2 peak at about 450 MB at a cold start). A node of a 1k cluster keeps
# about 30 MB of heap rather than the 128 MiB that -Xms128m -Xmn48m committed and touched up front (issue 27,
# docs/benchmarks.md, "Issue 27: the daemon's threads and heap"). The young generation stops at 48 MiB: a burst of 1,000 changes at 5k Services then
# runs a few young collections and no full one (docs/benchmarks.md, "GC pauses during a burst"; a heap kept tight,
# MinHeapFreeRatio=10 and MaxHeapFreeRatio=30, ran 2,022 collections and 18 full ones). G1 with a 10 ms goal did worse
# here (up to 127 ms, 770 MB RSS).
# On Java 17-19 the daemon also runs without the threads it never needs (issue 27): one C1 compiler thread, not one
# added under load; no code-cache sweeper (the daemon's C1 code fills 7 MB of the 48 MB code cache, and a full one
# stops the JIT, it does not fail); GC notifications delivered by the service thread, not a thread of their own.
# Later JVMs have no sweeper and refuse or warn about some of these flags, so the launcher passes them only when the
# runtime's release file says 17-19.
# JVM warnings go to stderr, so that `nftproxy render ... | nft -f -` stays clean.
#
# Class-data sharing for `run`: the JVM maps the classes the last run of this jar loaded instead of loading and
# verifying them again (about 0.5 s of a start on the test machine, docs/benchmarks.md). The archive is named by the jar's size and
# modification time, so a new jar never meets an old archive; the first run of a jar writes it when it exits.
# NFTPROXY_CDS_DIR says where (default: the user's cache directory); NFTPROXY_NO_CDS=1 turns it off.
# Whether a command line whose first argument is $1 runs the daemon: `run`, or, as kube-proxy is invoked, a flag
# other than the top level's own (`nftproxy --config=FILE ...` is `nftproxy run --config=FILE ...`).
nftproxy_runs_daemon() {
    case "$1" in
        run) return 0 ;;
        -h|--help|-V|--version) return 1 ;;
        -*) return 0 ;;
        *) return 1 ;;
    esac
}

# The feature release (17, 21, ...) of the java binary $1 (a path or a name on PATH), from its runtime's release file;
# empty when that cannot be read.
nftproxy_java_release() {
    java_bin="$(command -v "$1" 2>/dev/null || true)"
    [ -n "$java_bin" ] || return 0
    java_home="$(dirname "$(dirname "$(readlink -f "$java_bin")")")"
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$java_home/release" 2>/dev/null || true
}

# The daemon's archive extends the runtime's base archive (lib/server/classes.jsa, made by jlink for a release):
# Java 17 refuses to start at all when asked to write one without a base, so without a base, or without a cache
# directory it can write, the daemon starts without class-data sharing and this says so in one line on stderr.
nftproxy_jvm_flags() { # $1: the jar, $2: the first argument (the subcommand), $3: the java binary (default: java)
    flags="-XX:+UseSerialGC -Xms16m -XX:NewSize=8m -XX:MaxNewSize=48m -Xmx1g -XX:MinHeapFreeRatio=40 -XX:MaxHeapFreeRatio=70"
    flags="$flags -XX:TieredStopAtLevel=1 -Xss512k -Xlog:disable -Xlog:all=warning:stderr"
    if nftproxy_runs_daemon "$2"; then
        case "$(nftproxy_java_release "${3:-java}")" in
            17|18|19) flags="$flags -XX:CICompilerCount=1 -XX:-MethodFlushing -XX:+UnlockDiagnosticVMOptions -XX:-UseNotificationThread" ;;
        esac
    fi
    if nftproxy_runs_daemon "$2" && [ -z "${NFTPROXY_NO_CDS:-}" ]; then
        # No directory at all without HOME (a bare environment): never one made under / for want of a HOME.
        cds_dir="${NFTPROXY_CDS_DIR:-}"
        [ -n "$cds_dir" ] || [ -z "${XDG_CACHE_HOME:-${HOME:-}}" ] || cds_dir="${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy/cds"
        cds_key="$(stat -c '%s-%Y' "$1" 2>/dev/null || true)"
        cds_archive="$cds_dir/nftproxy-$cds_key.jsa"
        cds_base="$(nftproxy_base_archive "${3:-}")"
        # Writing the archive warns once per class it leaves out (hundreds of lines in the journal at the first stop
        # of a new jar, none of them actionable); a map that fails only costs the half second, so CDS says errors only.
        flags="$flags -Xlog:cds*=error:stderr"
        if [ -z "$cds_key" ]; then
            :
        elif [ -z "$cds_base" ]; then
            echo "nftproxy: starting without class-data sharing: the Java runtime of ${3:-java} has no base archive" \
                "(lib/server/classes.jsa; java -Xshare:dump makes one); NFTPROXY_NO_CDS=1 says nothing" >&2
        elif [ -z "$cds_dir" ]; then
            echo "nftproxy: starting without class-data sharing: no cache directory (set NFTPROXY_CDS_DIR or HOME;" \
                "NFTPROXY_NO_CDS=1 says nothing)" >&2
        elif [ -f "$cds_archive" ]; then
            flags="$flags -XX:SharedArchiveFile=$cds_archive"
        elif mkdir -p "$cds_dir" 2>/dev/null && [ -w "$cds_dir" ] && nftproxy_cds_room "$cds_dir"; then
            rm -f "$cds_dir"/nftproxy-*.jsa
            flags="$flags -XX:ArchiveClassesAtExit=$cds_archive"
        else
            echo "nftproxy: starting without class-data sharing: cannot write $cds_dir, or less than 64 MiB free there" \
                "(NFTPROXY_CDS_DIR names another; NFTPROXY_NO_CDS=1 says nothing)" >&2
        fi
    fi
    printf '%s' "$flags"
}

# The base class-data archive of the runtime that $1 (a path or a name on PATH) belongs to, or nothing. Without $1
# (callers that pass no java) the base is assumed, as before.
nftproxy_base_archive() {
    [ -n "$1" ] || { printf 'assumed'; return; }
    java_bin="$(command -v "$1" 2>/dev/null)" || return 0
    java_bin="$(readlink -f "$java_bin")"
    base="${java_bin%/bin/java}/lib/server/classes.jsa"
    [ -f "$base" ] && printf '%s' "$base"
    return 0
}

# A JVM that cannot write the whole archive at exit ("Unable to write to shared archive file") exits with status 1,
# whatever the command's own status was: in a full cache directory every stop of the daemon and every `run --once`
# would end as a failure. So the archive is asked for only where 64 MiB are free (it measured 9.5 MB after
# `run --help`; a daemon loads more classes). A directory that fills up while the daemon runs is not covered.
nftproxy_cds_room() { # $1: the directory
    df -Pk "$1" 2>/dev/null | {
        read -r _header || return 1
        read -r _fs _size _used avail _rest || return 1
        [ "$avail" -ge 65536 ] 2>/dev/null
    }
}
