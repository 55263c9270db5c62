#!/usr/bin/env bash
# Installs or removes nftproxy as a systemd service.
#
#   install.sh [--jar FILE] [--prefix DIR] [--dry-run]
#   install.sh --uninstall [--prefix DIR] [--dry-run]
#
# Installs the jar (and, from a release tarball, the Java runtime made for it) to /usr/local/lib/nftproxy/, the
# launcher to /usr/local/bin/nftproxy, the unit to /etc/systemd/system/nftproxy.service, the kernel-module list to
# /etc/modules-load.d/nftproxy.conf and a commented configuration to /etc/nftproxy/config.yaml (only when there is
# none: an existing one is never overwritten), and creates the system user nftproxy. It does not enable or start
# the unit. Runs from a release tarball (no system Java needed) or from a checkout (systemd/install.sh, jar from
# proxy-daemon/target, Java from PATH).
#
# --uninstall stops and removes all of that, except a config.yaml that was changed, and NEVER touches the nftables
# tables: stopping the proxy must not break the dataplane, so Services keep working on the last committed rules
# until someone deletes them on purpose.
#
# --prefix DIR installs into a staging root, as DESTDIR does (packaging, tests): files only, no user, no systemctl,
# no modprobe.
# --dry-run prints every action instead of doing it.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# A release tarball is laid out as the installed tree (bin/, lib/nftproxy/, share/nftproxy/); a checkout keeps the
# same files in the systemd module and the jar in proxy-daemon/target.
if [[ -f "$script_dir/lib/nftproxy/nftproxy.jar" && -d "$script_dir/share/nftproxy" ]]; then
    dist="$script_dir/share/nftproxy"
    jar="$script_dir/lib/nftproxy/nftproxy.jar"
    jvm_options="$script_dir/lib/nftproxy/nftproxy-jvm.sh"
    launcher_src="$script_dir/bin/nftproxy"
    runtime_src="$script_dir/lib/nftproxy/runtime"
else
    dist="$script_dir/src/main/dist"
    jar="$script_dir/../proxy-daemon/target/nftproxy.jar"
    jvm_options="$dist/nftproxy-jvm.sh"
    launcher_src="$dist/nftproxy-launcher.sh"
    runtime_src=""
fi
prefix=""
dry_run=0
uninstall=0
user=nftproxy

usage() {
    sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
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
config_dir="$prefix/etc/nftproxy"
config_file="$config_dir/config.yaml"
runtime_dir="$lib_dir/runtime"
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

do_install() {
    local file
    for file in "$dist/nftproxy.service" "$dist/nftproxy-modules.conf" "$dist/config.yaml" "$jvm_options" "$launcher_src"; do
        [[ -f "$file" ]] || die "not found: $file (an incomplete checkout or tarball?)"
    done
    if [[ ! -f "$jar" ]]; then
        ((dry_run)) || die "jar not found: $jar (build it with ./mvnw -DskipTests package -pl proxy-daemon -am, or pass --jar)"
        say "note: jar $jar does not exist yet"
    fi
    if ((live && !dry_run)) && [[ $EUID -ne 0 ]]; then
        die "installing to the live system needs root (or use --prefix DIR / --dry-run)"
    fi

    run install -d -m 0755 "$lib_dir" "$(dirname "$bin_file")" "$(dirname "$unit_file")" "$(dirname "$modules_file")"
    run install -m 0644 "$jar" "$lib_dir/nftproxy.jar"
    run install -m 0644 "$jvm_options" "$lib_dir/nftproxy-jvm.sh"
    run install -m 0755 "$launcher_src" "$bin_file"
    if [[ -n "$runtime_src" ]]; then
        # Replaced whole: files of an older runtime must not linger in a newer one.
        [[ -e "$runtime_dir" ]] && run rm -rf "$runtime_dir"
        run cp -R "$runtime_src" "$runtime_dir"
        # The base class-data archive of the runtime: a release's runtime has one (jlink made it); made here only for
        # a runtime without, since the daemon's own archive (nftproxy-jvm.sh) can only extend a runtime that has one.
        if [[ ! -f "$runtime_src/lib/server/classes.jsa" ]]; then
            run "$runtime_dir/bin/java" -Xshare:dump -Xlog:disable -Xlog:all=warning:stderr \
                || say "warning: no class-data archive for the runtime (starts take about 0.5 s longer)"
        fi
    fi
    run install -m 0644 "$dist/nftproxy.service" "$unit_file"
    run install -m 0644 "$dist/nftproxy-modules.conf" "$modules_file"
    if [[ -e "$config_file" ]]; then
        say "kept $config_file (never overwritten; the template is $dist/config.yaml)"
    elif ((live)); then
        # Readable by the service user only: it names the kubeconfig, and operators put credentials next to it.
        run install -d -m 0750 "$config_dir"
        run install -m 0640 "$dist/config.yaml" "$config_file"
    else
        run install -d -m 0755 "$config_dir"
        run install -m 0644 "$dist/config.yaml" "$config_file"
    fi

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
    run chgrp -R "$user" "$config_dir"
    # modules-load.d only runs at boot; load them now so the first start does not depend on a reboot.
    local module
    while read -r module; do
        run modprobe "$module" || say "warning: modprobe $module failed (built in, or missing on this kernel?)"
    done < <(grep -Ev '^[[:space:]]*(#|$)' "$dist/nftproxy-modules.conf")
    run systemctl daemon-reload
    say "installed. Edit /etc/nftproxy/config.yaml (clientConnection.kubeconfig, hostnameOverride, clusterCIDR), then:"
    say "  nftproxy run --config /etc/nftproxy/config.yaml --dry-run && systemctl enable --now nftproxy"
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
    [[ -d "$runtime_dir" ]] && run rm -rf "$runtime_dir"
    # The operator's configuration stays unless it is still the template, untouched.
    if [[ -f "$config_file" ]]; then
        if cmp -s "$config_file" "$dist/config.yaml"; then
            run rm -f "$config_file"
        else
            say "kept $config_file: it was changed (delete it by hand if it is no longer wanted)"
        fi
    fi
    [[ -d "$config_dir" && -z "$(ls -A "$config_dir")" ]] && run rmdir "$config_dir"
    prune_dirs "$lib_dir" "$(dirname "$bin_file")" "$(dirname "$unit_file")" "$(dirname "$modules_file")" "$(dirname "$config_dir")"
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
