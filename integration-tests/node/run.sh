#!/usr/bin/env bash
# Brings up a single real Kubernetes node inside namespaces this script creates, runs upstream's e2e tests against
# it with nftproxy (or, NODE_PROXY=kube-proxy, upstream kube-proxy) as the service proxy, and tears it all down.
#
#   sudo integration-tests/node/run.sh
#   E2E_FOCUS='\[sig-network\] Services' E2E_REPORT_DIR=/tmp/junit NODE_PROXY=kube-proxy ... run.sh
#   NODES=2 ... run.sh     # two nodes, dual-stack (IPv4 and IPv6): the proxy on both, the control plane on the first
#
# Needs root, Debian's containerd, runc, openssl, python3, gcc and debootstrap (for build.sh), and the binaries
# from integration-tests/apiserver/build.sh and integration-tests/node/build.sh (both are called; cached runs are
# instant). Nothing is done in the host's root network namespace: the node is one network namespace (veth pair
# with both ends inside it), every node process shares one private mount namespace, and cgroups live under a
# per-run directory in each hierarchy. The trap removes all of it, in order, however the script ends.
# With NODES=2 the second node is a second network namespace, linked to the first by a veth pair whose ends are both
# in the run's namespaces; it shares the first node's mount namespace and has its own containerd and kubelet.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
[[ $EUID -eq 0 ]] || { echo "run.sh must run as root" >&2; exit 2; }

NODE_PROXY="${NODE_PROXY:-nftproxy}"
E2E_FOCUS="${E2E_FOCUS:-\[sig-network\] Services .*\[Conformance\]}"
E2E_SKIP="${E2E_SKIP:-}"
E2E_TIMEOUT="${E2E_TIMEOUT:-40m}"
NODES="${NODES:-1}"
case "$NODES" in 1|2) ;; *) echo "NODES must be 1 or 2, not '$NODES'" >&2; exit 2 ;; esac
RUN="nftp-node-$$"                 # per-run prefix for the netns, cgroups and work dir
NS="$RUN"
CG="$RUN"
NODE_NAME="nftp-node"
NODE_IP=10.200.0.1
POD_CIDR=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
SVC_CIDR=10.96.0.0/16
DNS_IP=10.96.0.10
API_PORT=46443
node_ns() { if [[ $1 == 1 ]]; then echo "$NS"; else echo "$RUN-$1"; fi; }   # I: node I's network namespace
NSS=("$NS")                        # every network namespace of the run, one per node
DUAL=""                            # non-empty: dual-stack, the IPv6 half in ULA ranges (fd00::/8, private)
if [[ $NODES == 2 ]]; then
  NSS+=("$(node_ns 2)"); DUAL=1
  CLUSTER_CIDR=10.244.0.0/16,fd00:10:244::/56
  SVC_CIDR=10.96.0.0/16,fd00:10:96::/112
fi
node_vars() { # I: sets N_NAME, N_IP (every family's), N_DIR, N_SFX (of files and logs) and N_CG of node I
  if [[ $1 == 1 ]]; then N_NAME=$NODE_NAME N_DIR=$WORK N_SFX="" N_CG=$CG   # the single node's, unchanged
  else N_NAME=nftp-node-$1 N_DIR=$WORK/node$1 N_SFX=-$1 N_CG=$CG/node$1; fi
  N_IP=10.200.0.$1${DUAL:+,fd00:10:200::$1}
}
WORK="$(mktemp -d "/tmp/$RUN.XXXX")"
ETCD_DIR="/dev/shm/$RUN-etcd"
LOGS="${NODE_LOG_DIR:-$WORK/logs}"
mkdir -p "$LOGS"

log() { printf '[node %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
T_START=$(date +%s)

# ---- binaries ------------------------------------------------------------------------------------------------
export PATH="$PATH:/usr/local/go/bin"
# "namespaces": set up and tear down the namespaces and cgroups only (no binaries); "runtime": also etcd,
# kube-apiserver and containerd, with a one-file image imported (only the API server build and Debian's containerd)
STOP_AFTER="${NODE_STOP_AFTER:-}"
APIBIN="${NFTPROXY_TEST_CACHE:-$HOME/.cache/nftproxy}/k8s-${K8S_VERSION:-v1.36.3}/bin"
CNIBIN=/nonexistent; IMG=/nonexistent
if [[ "$STOP_AFTER" != namespaces && "$STOP_AFTER" != runtime ]]; then
APIBIN="$("$HERE/../apiserver/build.sh" | tail -1)"
NODEDIR="$("$HERE/build.sh" | tail -1)"
BIN="$NODEDIR/bin"; IMG="$NODEDIR/images"; CNIBIN="$NODEDIR/cni-bin"
for b in "$APIBIN/etcd" "$APIBIN/kube-apiserver" "$BIN/kubelet" "$BIN/kube-controller-manager" "$BIN/kube-scheduler" \
         "$BIN/kubectl" "$BIN/e2e.test" "$CNIBIN/bridge" /usr/bin/containerd /usr/bin/ctr /usr/sbin/runc; do
  [[ -x "$b" ]] || { log "missing $b"; exit 2; }
done
fi
if [[ "$NODE_PROXY" == nftproxy && -z "$STOP_AFTER" ]]; then
  # The launcher builds the jar when a source is newer; done here, outside the namespaces, so the proxy starts at once.
  "$REPO/nftproxy" --version >&2
fi
if [[ "$NODE_PROXY" == nftproxy-daemonset && -z "$STOP_AFTER" ]]; then
  # Exactly what the release ships: release/target's OCI image archive and the manifest inside release/target's
  # tarball (deploy/nftproxy.yaml), both made by the release module's package phase; made here first (about a
  # minute) when missing or older than the jar or the release's own files.
  "$REPO/nftproxy" --version >&2   # builds the jar when a source is newer
  rel_tgz=$(ls "$REPO"/release/target/nftproxy-*-linux-*.tar.gz 2>/dev/null | head -1 || true)
  NFTPROXY_IMAGE_TAR=${rel_tgz%.tar.gz}.oci.tar
  if [[ -z "$rel_tgz" || ! -f "$NFTPROXY_IMAGE_TAR" ]] \
      || [[ -n "$(find "$REPO/proxy-daemon/target/nftproxy.jar" "$REPO/release" "$REPO/systemd/src/main/dist" \
                  -path "$REPO/release/target" -prune -o -type f -newer "$NFTPROXY_IMAGE_TAR" -print | head -1)" ]]; then
    log "building the release (tarball and image): ./mvnw package -pl release -am"
    (cd "$REPO" && ./mvnw -B -q -DskipTests package -pl release -am) >&2
    rel_tgz=$(ls "$REPO"/release/target/nftproxy-*-linux-*.tar.gz | head -1)
    NFTPROXY_IMAGE_TAR=${rel_tgz%.tar.gz}.oci.tar
  fi
  # The name the archive gives the image once imported, from its own index.
  NFTPROXY_IMAGE=$(tar -xOf "$NFTPROXY_IMAGE_TAR" index.json \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["manifests"][0]["annotations"]["io.containerd.image.name"])')
  rel_name=$(basename "$rel_tgz" .tar.gz)
  tar -xzOf "$rel_tgz" "$rel_name/deploy/nftproxy.yaml" > "$WORK/nftproxy-released.yaml"
  log "released image $NFTPROXY_IMAGE ($NFTPROXY_IMAGE_TAR) and manifest $rel_name/deploy/nftproxy.yaml"
fi
T_BUILT=$(date +%s)

# ---- teardown: pods, proxy, kubelet, runtime, control plane, mounts, cgroups, namespace ------------------------
HOLDER=""
fzx() { nsenter -t "$HOLDER" -m -n -- "$@"; }
nx() { # I CMD...: CMD in node I's network namespace and the run's mount namespace (node 1: as fzx)
  local ns; ns=$(node_ns "$1"); shift
  nsenter -t "$HOLDER" -m --net="/run/netns/$ns" -- "$@"
}
cg_dirs() { for h in /sys/fs/cgroup/*/; do [[ -d "$h$CG" ]] && echo "$h$CG"; done; [[ -d "/sys/fs/cgroup/$CG" ]] && echo "/sys/fs/cgroup/$CG"; true; }
ns_pids() { # every process in our mount namespace, except the holder
  [[ -n "$HOLDER" ]] || return 0
  local m p; m=$(readlink "/proc/$HOLDER/ns/mnt" 2>/dev/null) || return 0
  for p in /proc/[0-9]*; do p=${p#/proc/}
    [[ $p != "$HOLDER" && "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" == "$m" ]] && echo "$p"; done; true
}
cg_pids() { local d; for d in $(cg_dirs); do find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done; true; }
any_alive() { local p; for p; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }   # PID...
teardown() {
  local rc=$?
  trap - EXIT INT TERM ERR
  set +eu
  log "teardown (exit $rc)"
  if [[ -n "${E2E_PID:-}" ]] && kill -0 "$E2E_PID" 2>/dev/null; then
    kill -TERM "$E2E_PID"; for _ in $(seq 60); do kill -0 "$E2E_PID" 2>/dev/null || break; sleep 1; done
  fi
  if [[ -n "$HOLDER" && -n "${BIN:-}" ]] && kill -0 "$HOLDER" 2>/dev/null && [[ -f "$WORK/admin.kubeconfig" ]]; then
    # Deleting the pods through the API lets the kubelet run CNI DEL for each; bounded.
    fzx "$BIN/kubectl" --kubeconfig "$WORK/admin.kubeconfig" delete deployment -n kube-system coredns --wait=false >/dev/null 2>&1
    fzx "$BIN/kubectl" --kubeconfig "$WORK/admin.kubeconfig" delete daemonset -n kube-system kube-proxy --wait=false >/dev/null 2>&1
    fzx "$BIN/kubectl" --kubeconfig "$WORK/admin.kubeconfig" delete pods --all -A --grace-period=1 --timeout=60s >/dev/null 2>&1
  fi
  if [[ -n "$HOLDER" ]] && kill -0 "$HOLDER" 2>/dev/null; then
    # A group at a time (both nodes' proxies, then kubelets, then runtimes), in the order they depend on each other.
    for group in proxy,proxy-2 kubelet,kubelet-2 containerd,containerd-2 kube-scheduler kube-controller-manager kube-apiserver etcd; do
      local pids="" name f
      for name in ${group//,/ }; do f="$WORK/$name.pid"; [[ -f $f ]] && pids+=" $(cat "$f")"; done
      [[ -n $pids ]] || continue
      kill $pids 2>/dev/null
      for _ in $(seq 50); do any_alive $pids || break; sleep 0.2; done
      kill -9 $pids 2>/dev/null
    done
    # Shims and containers that outlived containerd: ours are in our cgroups or our mount namespace.
    for p in $(cg_pids) $(ns_pids); do kill -9 "$p" 2>/dev/null; done
    sleep 1
    kill -9 "$HOLDER" 2>/dev/null   # the last process of the mount namespace: every mount made inside goes away
    wait "$HOLDER" 2>/dev/null
  fi
  for _ in 1 2 3; do
    for d in $(cg_dirs); do find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null; done
    [[ -z "$(cg_dirs)" ]] && break; sleep 1
  done
  [[ -n "$(cg_dirs)" ]] && log "WARNING: cgroups left: $(cg_dirs | tr '\n' ' ')"
  for ns in "${NSS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  [[ -n "${MADE_RUN_CTD:-}" ]] && rmdir /run/containerd 2>/dev/null
  rm -rf "$ETCD_DIR"
  if [[ -n "${NODE_KEEP_WORK:-}" ]]; then log "work dir kept: $WORK"; else
    [[ -n "${E2E_REPORT_DIR:-}" ]] && mkdir -p "$E2E_REPORT_DIR" && cp -r "$LOGS" "$E2E_REPORT_DIR/node-logs" 2>/dev/null
    rm -rf "$WORK"; fi
  # What must be gone: a leftover fails the run even when the tests passed.
  local left=""
  for ns in "${NSS[@]}"; do ip netns list 2>/dev/null | grep -qE "^$ns( |\$)" && left+=" netns $ns;"; done
  grep -q "$RUN" /proc/self/mounts && left+=" mounts: $(grep -c "$RUN" /proc/self/mounts);"
  [[ -n "$(cg_dirs)" ]] && left+=" cgroups: $(cg_dirs | tr '\n' ' ');"
  pgrep -f "$RUN" >/dev/null && left+=" processes: $(pgrep -f "$RUN" | tr '\n' ' ');"
  if [[ -n "$left" ]]; then log "ERROR: teardown left behind:$left"; [[ $rc -eq 0 ]] && rc=1
  else log "teardown done: no netns, mount, cgroup or process of $RUN left"; fi
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

wait_for() { # SECONDS WHAT CMD...: bounded by the clock, however long each try takes
  local secs=$1 what=$2 t0; shift 2; t0=$(date +%s)
  while (( $(date +%s) - t0 < secs )); do
    "$@" >/dev/null 2>&1 && { log "$what: ready after $(( $(date +%s) - t0 ))s"; return 0; }; sleep 1
  done
  log "$what: not ready after ${secs}s"; return 1
}

# ---- namespaces ----------------------------------------------------------------------------------------------
for ns in "${NSS[@]}"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
if [[ $NODES == 1 ]]; then
ip -n "$NS" link add eth0 type veth peer name eth0p     # both ends are created inside $NS
ip -n "$NS" addr add "$NODE_IP/24" dev eth0
ip -n "$NS" link set eth0 up
ip -n "$NS" link set eth0p up
ip -n "$NS" route add default via 10.200.0.254 dev eth0 onlink
else
  # The nodes' wire: one veth pair, an end in each node's namespace (never the host's). Routes to each other's pods
  # are added once the controller manager has given the nodes their pod ranges.
  ip -n "$NS" link add eth0 type veth peer name eth0 netns "${NSS[1]}"
  for i in 1 2; do
    ns=${NSS[i-1]}
    ip -n "$ns" addr add "10.200.0.$i/24" dev eth0
    ip -n "$ns" addr add "fd00:10:200::$i/64" dev eth0 nodad   # no DAD: the kubelet binds it at once
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add default via 10.200.0.254 dev eth0 onlink
    ip -n "$ns" -6 route add default via fd00:10:200::fe dev eth0 onlink
  done
fi
MADE_RUN_CTD=""; [[ -d /run/containerd ]] || { mkdir /run/containerd; MADE_RUN_CTD=1; }
setsid nsenter --net="/run/netns/$NS" unshare --mount --propagation slave sleep 100000 &
HOLDER=$!
own_mnt_ns() { [[ -e /proc/$HOLDER/ns/mnt && "$(readlink "/proc/$HOLDER/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]]; }
wait_for 10 "mount namespace" own_mnt_ns
start_on() { # I NAME CMD...: a daemon inside node I's namespaces, logging to $LOGS/NAME.log
  local i=$1 name=$2 ns; shift 2; ns=$(node_ns "$i")
  setsid nsenter -t "$HOLDER" -m --net="/run/netns/$ns" -- "$@" >"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$WORK/$name.pid"
}
start() { start_on 1 "$@"; }   # NAME CMD...: on node 1, where the control plane runs
# containerd 1.6 keeps shim sockets under /run/containerd: a private tmpfs keeps them off the host.
fzx mount -t tmpfs tmpfs /run/containerd
# kubelet writes container log symlinks under /var/log/containers (a fixed path): keep them off the host too.
fzx mount -t tmpfs tmpfs /var/log
# kubelet writes a few global sysctls; inside our mount namespace those files are bind-mounted copies.
mkdir -p "$WORK/sysctl-mask"
for f in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
  m="$WORK/sysctl-mask/${f//\//_}"; cat "/proc/sys/$f" > "$m"; fzx mount --bind "$m" "/proc/sys/$f"
done
# Pod -> ClusterIP -> pod on the same bridge needs bridged packets to reach nftables: br_netfilter (built in here;
# a module elsewhere, which .ci/run loads).
fzx test -e /proc/sys/net/bridge/bridge-nf-call-iptables \
  || { log "no net.bridge.bridge-nf-call-iptables: load br_netfilter first (modprobe br_netfilter)"; exit 2; }
for i in $(seq "$NODES"); do
  nx "$i" sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward; echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables'
  [[ -z $DUAL ]] || nx "$i" sh -c 'echo 1 > /proc/sys/net/ipv6/conf/all/forwarding; echo 1 > /proc/sys/net/bridge/bridge-nf-call-ip6tables'
done
# Node I > 1 has its kubelet's cgroupRoot under node 1's (N_CG), so every cgroup of the run is under $CG.
for i in $(seq "$NODES"); do node_vars "$i"
for h in /sys/fs/cgroup/*/; do
  case "$h" in */unified/|*/systemd/|*/cpu/|*/cpuacct/|*/cpu,cpuacct/|*/cpuset/|*/memory/|*/devices/|*/freezer/|*/blkio/|*/pids/|*/hugetlb/|*/net_cls*/|*/net_prio/|*/perf_event/) mkdir -p "$h$N_CG";; esac
done
if [[ -d /sys/fs/cgroup/cpuset/$N_CG ]]; then
  cat /sys/fs/cgroup/cpuset/cpuset.cpus > "/sys/fs/cgroup/cpuset/$N_CG/cpuset.cpus"
  cat /sys/fs/cgroup/cpuset/cpuset.mems > "/sys/fs/cgroup/cpuset/$N_CG/cpuset.mems"
fi
done

if [[ "$STOP_AFTER" == namespaces ]]; then
  for i in $(seq "$NODES"); do nx "$i" ip -br addr; nx "$i" sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/bridge/bridge-nf-call-iptables'; done
  log "namespaces and cgroups are up (NODE_STOP_AFTER=namespaces): $(cg_dirs | wc -l) cgroup dirs"; exit 0
fi

# ---- PKI and kubeconfig --------------------------------------------------------------------------------------
P="$WORK/pki"; mkdir -p "$P"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=nftp-node-ca -keyout "$P/ca.key" -out "$P/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout "$P/api.key" -out "$P/api.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n' "$NODE_IP" > "$P/api.ext"
openssl x509 -req -in "$P/api.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 2 -extfile "$P/api.ext" -out "$P/api.crt" 2>/dev/null
openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
echo "$TOKEN,admin,admin,system:masters" > "$P/tokens.csv"
cat > "$WORK/admin.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: node, cluster: {server: "https://$NODE_IP:$API_PORT", certificate-authority: "$P/ca.crt"}}]
users: [{name: admin, user: {token: "$TOKEN"}}]
contexts: [{name: node, context: {cluster: node, user: admin}}]
current-context: node
KC
KC="$WORK/admin.kubeconfig"
kctl() { fzx "$BIN/kubectl" --kubeconfig "$KC" "$@"; }

# ---- control plane -------------------------------------------------------------------------------------------
T0=$(date +%s)
mkdir -p "$ETCD_DIR"
start etcd "$APIBIN/etcd" --data-dir "$ETCD_DIR" --unsafe-no-fsync \
  --listen-client-urls http://127.0.0.1:42379 --advertise-client-urls http://127.0.0.1:42379 \
  --listen-peer-urls http://127.0.0.1:42380 --initial-advertise-peer-urls http://127.0.0.1:42380 \
  --initial-cluster default=http://127.0.0.1:42380
start kube-apiserver "$APIBIN/kube-apiserver" --bind-address="$NODE_IP" --advertise-address="$NODE_IP" \
  --secure-port="$API_PORT" --etcd-servers=http://127.0.0.1:42379 --token-auth-file="$P/tokens.csv" \
  --client-ca-file="$P/ca.crt" --tls-cert-file="$P/api.crt" --tls-private-key-file="$P/api.key" \
  --authorization-mode=Node,RBAC --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-cluster-ip-range="$SVC_CIDR" --allow-privileged=true \
  --kubelet-preferred-address-types=InternalIP,Hostname --service-node-port-range=30000-32767
wait_for 120 "kube-apiserver" fzx curl -sf --cacert "$P/ca.crt" -H "Authorization: Bearer $TOKEN" "https://$NODE_IP:$API_PORT/readyz"
if [[ "$STOP_AFTER" != runtime ]]; then
# Dual-stack: the controller manager gives each node a pod range of both families (node.spec.podCIDRs, which the
# dual-stack e2e tests check), and the CNI configuration is written from them.
CM_DUAL=(); [[ -z $DUAL ]] || CM_DUAL=(--allocate-node-cidrs=true "--cluster-cidr=$CLUSTER_CIDR" "--service-cluster-ip-range=$SVC_CIDR")
start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$KC" --leader-elect=false \
  --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" --use-service-account-credentials=false "${CM_DUAL[@]}"
start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$KC" --leader-elect=false
fi

# ---- runtime and kubelet -------------------------------------------------------------------------------------
cni_config() { # FILE SUBNET...: the bridge network with one host-local range per subnet (one per family)
  local file=$1 ranges="" routes="" sn; shift
  for sn in "$@"; do
    ranges+="${ranges:+, }[{\"subnet\": \"$sn\"}]"
    if [[ $sn == *:* ]]; then routes+="${routes:+, }{\"dst\": \"::/0\"}"; else routes+="${routes:+, }{\"dst\": \"0.0.0.0/0\"}"; fi
  done
  cat > "$file" <<CNI
{"cniVersion": "0.4.0", "name": "nftp-pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [$ranges], "routes": [$routes],
            "dataDir": "$(dirname "$(dirname "$file")")/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
CNI
}
pod_cidrs() { kctl get node "$1" -o jsonpath='{.spec.podCIDRs[*]}'; }   # NODE: its pod ranges, space-separated
has_pod_cidrs() { [[ -n "$(pod_cidrs "$1")" ]]; }
node_up() { # I: node I's containerd (images imported) and kubelet, until the node is Ready
local i=$1; node_vars "$1"
local D=$N_DIR
mkdir -p "$D/ctd" "$D/cni/net.d" "$D/cni/ipam" "$D/kubelet/root" "$D/podlogs"
cat > "$D/ctd/config.toml" <<TOML
version = 2
root = "$D/ctd/root"
state = "$D/ctd/state"
[grpc]
  address = "$D/ctd/containerd.sock"
[ttrpc]
  address = "$D/ctd/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$(cat "$IMG/pause.ref" 2>/dev/null)"
  # pod netns mounts under our state dir, not /run/netns
  netns_mounts_under_state_dir = true
  # no CAP_SYS_RESOURCE on this kind of VM: a negative oom_score_adj is refused
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "/usr/sbin/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNIBIN"
    conf_dir = "$D/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ""
TOML
# One node: a fixed pod range. Dual-stack: the ranges the controller manager gives the node, once it has registered.
[[ -n $DUAL ]] || cni_config "$D/cni/net.d/10-node.conflist" "$POD_CIDR"
# Two nodes: each runtime in a UTS namespace named for its node, so a hostNetwork pod's hostname is its node's name
# (the multi-node e2e tests tell nodes apart by it), as on a real node; one node keeps the machine's, as before.
UTS=(); [[ $NODES == 1 ]] || UTS=(unshare --uts sh -c 'hostname "$0" && exec "$@"' "$N_NAME")
start_on "$i" "containerd$N_SFX" "${UTS[@]}" /usr/bin/containerd --config "$D/ctd/config.toml"
wait_for 60 "containerd$N_SFX" nx "$i" ctr -a "$D/ctd/containerd.sock" version
if [[ "$STOP_AFTER" == runtime ]]; then
  mkdir -p "$WORK/img-root"; echo probe > "$WORK/img-root/probe"
  python3 "$HERE/../../release/oci-image.py" "$WORK/img-root" local.test/probe:1 "$WORK/probe.tar" --cmd /probe >/dev/null
  fzx ctr -a "$WORK/ctd/containerd.sock" -n k8s.io images import "$WORK/probe.tar"
  fzx ctr -a "$WORK/ctd/containerd.sock" -n k8s.io images ls -q
  log "runtime stage up (NODE_STOP_AFTER=runtime)"; exit 0
fi
for t in "$IMG"/*.tar ${NFTPROXY_IMAGE:+"$NFTPROXY_IMAGE_TAR"}; do nx "$i" ctr -a "$D/ctd/containerd.sock" -n k8s.io images import "$t" >/dev/null; done
log "images imported into $N_NAME: $(ls "$IMG" | tr '\n' ' ')"

echo "nameserver 192.0.2.53" > "$D/resolv.conf"
cat > "$D/kubelet/config.yaml" <<KCFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$N_CG
containerRuntimeEndpoint: unix://$D/ctd/containerd.sock
address: ${N_IP%%,*}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}, x509: {clientCAFile: $P/ca.crt}}
authorization: {mode: AlwaysAllow}
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
failSwapOn: false
podLogsDirectory: $D/podlogs
resolvConf: $D/resolv.conf
serializeImagePulls: false
volumePluginDir: $D/kubelet/volume-plugins
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
KCFG
start_on "$i" "kubelet$N_SFX" "$BIN/kubelet" --config="$D/kubelet/config.yaml" --kubeconfig="$KC" \
  --root-dir="$D/kubelet/root" --hostname-override="$N_NAME" --node-ip="$N_IP"
if [[ -n $DUAL ]]; then
  wait_for 120 "pod ranges of $N_NAME" has_pod_cidrs "$N_NAME"
  # shellcheck disable=SC2046 # one argument per range
  cni_config "$D/cni/net.d/10-node.conflist" $(pod_cidrs "$N_NAME")
  log "$N_NAME: pods in $(pod_cidrs "$N_NAME")"
fi
wait_for 180 "node $N_NAME Ready" kctl wait --for=condition=Ready "node/$N_NAME" --timeout=1s
}
# One after the other, so node 1 gets the first pod ranges.
for i in $(seq "$NODES"); do node_up "$i"; done
if [[ $NODES == 2 ]]; then
  # Each node routes the other's pod ranges to the other's address of the same family, over the wire between them.
  for i in 1 2; do j=$((3 - i)); node_vars "$j"
    for sn in $(pod_cidrs "$N_NAME"); do
      if [[ $sn == *:* ]]; then nx "$i" ip -6 route add "$sn" via "fd00:10:200::$j" dev eth0
      else nx "$i" ip route add "$sn" via "10.200.0.$j" dev eth0; fi
    done
  done
fi

# ---- service proxy -------------------------------------------------------------------------------------------
has_tables() { nx "$1" nft list table ip kube-proxy && { [[ -z $DUAL ]] || nx "$1" nft list table ip6 kube-proxy; }; }  # I
case "$NODE_PROXY" in
  nftproxy)
    # The real CLI, as an operator runs it (the jar was built before the namespaces came up).
    for i in $(seq "$NODES"); do node_vars "$i"
      start_on "$i" "proxy$N_SFX" "$REPO/nftproxy" run --kubeconfig "$KC" --hostname-override "$N_NAME" --cluster-cidr "$CLUSTER_CIDR"
    done ;;
  kube-proxy)
    [[ -x "$BIN/kube-proxy" ]] || { log "missing $BIN/kube-proxy"; exit 2; }
    for i in $(seq "$NODES"); do node_vars "$i"
      start_on "$i" "proxy$N_SFX" "$BIN/kube-proxy" --kubeconfig="$KC" --proxy-mode=nftables --hostname-override="$N_NAME" \
        --cluster-cidr="$CLUSTER_CIDR" --conntrack-max-per-core=0 --metrics-bind-address=127.0.0.1:10249 \
        --healthz-bind-address=127.0.0.1:10256
    done ;;
  nftproxy-daemonset)
    # The release's manifest with its three values filled in as release/README.md says, and nothing else changed.
    sed -e "s|@IMAGE@|$NFTPROXY_IMAGE|" -e "s|@API_SERVER@|https://$NODE_IP:$API_PORT|" -e "s|@CLUSTER_CIDR@|$CLUSTER_CIDR|" \
      "$WORK/nftproxy-released.yaml" > "$WORK/nftproxy-daemonset.yaml"
    if grep -n '@[A-Z_]*@' "$WORK/nftproxy-daemonset.yaml"; then log "the released manifest has a value left to fill in"; exit 2; fi
    kctl apply -f "$WORK/nftproxy-daemonset.yaml" >/dev/null
    wait_for 180 "nftproxy DaemonSet ready" kctl -n kube-system rollout status daemonset/kube-proxy --timeout=1s ;;
  *) log "NODE_PROXY must be nftproxy, nftproxy-daemonset or kube-proxy"; exit 2 ;;
esac
for i in $(seq "$NODES"); do node_vars "$i"; wait_for 120 "$NODE_PROXY tables on $N_NAME" has_tables "$i"; done

# ---- cluster DNS ---------------------------------------------------------------------------------------------
sed "s/@DNS_IP@/$DNS_IP/" "$HERE/coredns.yaml" > "$WORK/coredns.yaml"
kctl apply -f "$WORK/coredns.yaml" >/dev/null
wait_for 180 "coredns" kctl -n kube-system wait --for=condition=Available deployment/coredns --timeout=1s
wait_for 60 "default service account" kctl get serviceaccount default
T_UP=$(date +%s)
log "node up in $((T_UP - T0)) s (binaries checked in $((T_BUILT - T_START)) s)"

# ---- e2e -----------------------------------------------------------------------------------------------------
REPORT="${E2E_REPORT_DIR:-$WORK/report}"; mkdir -p "$REPORT"
log "e2e.test --ginkgo.focus='$E2E_FOCUS' (proxy: $NODE_PROXY), JUnit into $REPORT"
set +e
nsenter -t "$HOLDER" -m -n -- "$BIN/e2e.test" --kubeconfig="$KC" --provider=local --kubectl-path="$BIN/kubectl" \
  --ginkgo.focus="$E2E_FOCUS" ${E2E_SKIP:+--ginkgo.skip="$E2E_SKIP"} --ginkgo.no-color --ginkgo.timeout="$E2E_TIMEOUT" \
  --report-dir="$REPORT" --ginkgo.junit-report="$REPORT/junit-ginkgo.xml" --dump-logs-on-failure=false > "$LOGS/e2e.log" 2>&1 &
# In the background, so INT/TERM reach the trap at once (bash defers traps while a foreground job runs); the trap
# sends e2e.test TERM (a background job ignores INT), on which Ginkgo stops and writes its report.
E2E_PID=$!
tail -n +1 --pid="$E2E_PID" -f "$LOGS/e2e.log" &
wait "$E2E_PID"; e2e_rc=$?
E2E_PID=""
set -e
T_E2E=$(date +%s)
log "e2e exit $e2e_rc in $((T_E2E - T_UP)) s; $(grep -E '^(Ran|SUCCESS|FAIL)' "$LOGS/e2e.log" | tr '\n' ' ')"
exit "$e2e_rc"
