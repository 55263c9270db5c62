#!/usr/bin/env bash
# Installs or removes nftproxy as a systemd service.
#
#   systemd/install.sh [--jar FILE] [--prefix DIR] [--dry-run]
#   systemd/install.sh --uninstall [--prefix DIR] [--dry-run]
#
# Installs the jar to /usr/local/lib/nftproxy/, a launcher to /usr/local/bin/nftproxy, the unit to
# /etc/systemd/system/nftproxy.service and the kernel-module list to /etc/modules-load.d/nftproxy.conf, and creates the
# system user nftproxy. It does not enable or start the unit, and does not write /etc/nftproxy/config.yaml.
#
# --uninstall stops and removes all of that, but NEVER touches the nftables tables: stopping the proxy must not break
# the dataplane, so Services keep working on the last committed rules until someone deletes them on purpose.
#
# --prefix DIR installs into a staging root (packaging, tests): files only, no user, no systemctl, no modprobe.
# --dry-run prints every action instead of doing it.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dist="$script_dir/src/main/dist"
jar="$script_dir/../proxy-daemon/target/nftproxy.jar"
prefix=""
dry_run=0
uninstall=0
user=nftproxy

usage() {
    sed -n '2,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

die() {
    echo "install.sh: $*" >&2
    exit 1
}

while (($#)); do
    case "$1" in
        --jar) (($# >= 2)) || die "--jar needs a file"; jar="$2"; shift 2 ;;
        --prefix) (($# >= 2)) || die "--prefix needs a directory"; prefix="$2"; shift 2 ;;
        --dry-run) dry_run=1; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
done

if [[ -n "$prefix" ]]; then
    [[ "$prefix" == /* ]] || prefix="$(pwd)/$prefix"
    prefix="${prefix%/}"
    [[ -n "$prefix" ]] || die "--prefix / is the live system; leave --prefix out instead"
fi

lib_dir="$prefix/usr/local/lib/nftproxy"
bin_file="$prefix/usr/local/bin/nftproxy"
unit_file="$prefix/etc/systemd/system/nftproxy.service"
modules_file="$prefix/etc/modules-load.d/nftproxy.conf"
live=0
[[ -z "$prefix" ]] && live=1

# Every change to the system goes through here, so --dry-run shows exactly what a real run would do.
run() {
    if ((dry_run)); then
        printf 'would run:'
        printf ' %q' "$@"
        printf '\n'
    else
        "$@"
    fi
}

say() {
    echo "install.sh: $*"
}

# Under --prefix, empty parent directories the install created are removed up to the staging root; on the live
# system only our own directory goes, never /usr/local/bin or /etc/systemd/system.
prune_dirs() {
    local dir
    for dir in "$@"; do
        if ((live)); then
            [[ "$dir" == "$lib_dir" && -d "$dir" ]] && run rmdir --ignore-fail-on-non-empty "$dir"
            continue
        fi
        while [[ "$dir" != "$prefix" && "$dir" == "$prefix"/* && -d "$dir" ]]; do
            if [[ -n "$(ls -A "$dir")" ]]; then
                break
            fi
            run rmdir "$dir"
            ((dry_run)) && break
            dir="$(dirname "$dir")"
        done
    done
}

launcher() {
    cat <<'LAUNCHER'
#!/bin/sh
# nftproxy launcher, installed by systemd/install.sh. exec, not fork: the unit's NotifyAccess=main accepts sd_notify
# messages only from the main process, which must therefore be the JVM itself.
# JVM flags: nftproxy-jvm.sh (heap, GC, JIT, class-data sharing); NFTPROXY_JAVA_OPTS overrides any of them.
. /usr/local/lib/nftproxy/nftproxy-jvm.sh
exec "${JAVA:-java}" $(nftproxy_jvm_flags /usr/local/lib/nftproxy/nftproxy.jar "${1:-}") ${NFTPROXY_JAVA_OPTS:-} \
    -jar /usr/local/lib/nftproxy/nftproxy.jar "$@"
LAUNCHER
}

do_install() {
    [[ -f "$dist/nftproxy.service" && -f "$dist/nftproxy-modules.conf" ]] || die "unit files not found under $dist"
    if [[ ! -f "$jar" ]]; then
        ((dry_run)) || die "jar not found: $jar (build it with ./mvnw -DskipTests package -pl proxy-daemon -am, or pass --jar)"
        say "note: jar $jar does not exist yet"
    fi
    if ((live && !dry_run)) && [[ $EUID -ne 0 ]]; then
        die "installing to the live system needs root (or use --prefix DIR / --dry-run)"
    fi

    run install -d -m 0755 "$lib_dir" "$(dirname "$bin_file")" "$(dirname "$unit_file")" "$(dirname "$modules_file")"
    run install -m 0644 "$jar" "$lib_dir/nftproxy.jar"
    run install -m 0644 "$dist/nftproxy-jvm.sh" "$lib_dir/nftproxy-jvm.sh"
    if ((dry_run)); then
        printf 'would write: %q (launcher: exec java -jar /usr/local/lib/nftproxy/nftproxy.jar)\n' "$bin_file"
    else
        launcher >"$bin_file"
        chmod 0755 "$bin_file"
    fi
    run install -m 0644 "$dist/nftproxy.service" "$unit_file"
    run install -m 0644 "$dist/nftproxy-modules.conf" "$modules_file"

    if ((!live)); then
        say "staged under $prefix: no user created, no modules loaded, systemd not reloaded"
        return
    fi
    if getent passwd "$user" >/dev/null; then
        say "user $user exists"
    else
        run useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
            --comment "nftproxy service proxy" "$user"
    fi
    # modules-load.d only runs at boot; load them now so the first start does not depend on a reboot.
    local module
    while read -r module; do
        run modprobe "$module" || say "warning: modprobe $module failed (built in, or missing on this kernel?)"
    done < <(grep -Ev '^[[:space:]]*(#|$)' "$dist/nftproxy-modules.conf")
    run systemctl daemon-reload
    say "installed. Put the configuration in /etc/nftproxy/config.yaml, then: systemctl enable --now nftproxy"
}

do_uninstall() {
    if ((live && !dry_run)) && [[ $EUID -ne 0 ]]; then
        die "uninstalling from the live system needs root (or use --prefix DIR / --dry-run)"
    fi
    if ((live)); then
        # Stopping sends SIGTERM; the daemon exits without deleting its tables (Services keep working).
        run systemctl disable --now nftproxy.service || say "warning: could not stop/disable nftproxy.service"
    fi
    local file
    for file in "$unit_file" "$modules_file" "$bin_file" "$lib_dir/nftproxy.jar" "$lib_dir/nftproxy-jvm.sh"; do
        if [[ -e "$file" || -L "$file" ]]; then
            run rm -f "$file"
        fi
    done
    prune_dirs "$lib_dir" "$(dirname "$bin_file")" "$(dirname "$unit_file")" "$(dirname "$modules_file")"
    if ((live)); then
        run systemctl daemon-reload
        if getent passwd "$user" >/dev/null; then
            run userdel "$user"
        fi
    fi
    say "removed. The nftables tables were left in place on purpose; to delete them as well:"
    say "  nft delete table ip kube-proxy; nft delete table ip6 kube-proxy"
}

if ((uninstall)); then
    do_uninstall
else
    do_install
fi
