# JVM options for nftproxy, sourced by both launchers (./nftproxy in a checkout, the one install.sh writes). POSIX sh.
#
# A small long-running daemon, not a batch job: serial GC (one thread, no concurrent workers), the JIT's first tier
# only (C2 burns seconds of CPU at start for code that runs a few times a second). The heap has a fixed 48 MiB young
# generation and room to grow: with a heap kept tight (-Xms16m, MaxHeapFreeRatio=30) a burst of 1,000 changes at 5k
# Services ran 2,022 collections and 18 full ones of up to 203 ms; with these flags 279 young ones, none full, at most
# 38 ms (docs/benchmarks.md, "GC pauses during a burst"). G1 with a 10 ms goal did worse here (up to 127 ms, 770 MB RSS).
# Since the manifest source re-parses only changed files, such a burst runs 3-4 young collections; -Xmn16m shortened
# them but filled the old generation twice as fast over 10 bursts, so the young generation stays at 48 MiB.
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

# The daemon's archive extends the runtime's base archive (lib/server/classes.jsa, made by jlink for a release):
# Java 17 refuses to start at all when asked to write one without a base, so without a base, or without a cache
# directory it can write, the daemon starts without class-data sharing and this says so in one line on stderr.
nftproxy_jvm_flags() { # $1: the jar, $2: the first argument (the subcommand), $3: the java command (optional)
    flags="-XX:+UseSerialGC -Xms128m -Xmn48m -Xmx1g -XX:MinHeapFreeRatio=40 -XX:MaxHeapFreeRatio=70 -XX:TieredStopAtLevel=1"
    flags="$flags -Xss512k -Xlog:disable -Xlog:all=warning:stderr"
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
