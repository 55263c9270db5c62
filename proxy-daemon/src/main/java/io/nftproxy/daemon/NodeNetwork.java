package io.nftproxy.daemon;

import io.nftproxy.conntrack.CleanupReport;
import io.nftproxy.conntrack.ConntrackCleaner;
import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.netlink.lock.NetnsLock;
import io.nftproxy.netlink.monitor.NftablesMonitor;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.monitor.CommitLedger;
import io.nftproxy.netlink.monitor.TableChangeListener;
import io.nftproxy.netlink.rt.AddressDump;
import io.nftproxy.netlink.rt.AddressMonitor;
import io.nftproxy.netlink.rt.InterfaceAddress;
import io.nftproxy.net.IpAddress;
import io.nftproxy.proxy.ProxyState;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * The node's network as the daemon uses it, apart from nftables: its addresses and their changes, the nftables
 * monitor, conntrack, and where sockets are created. The daemon's own namespace in production; a named network
 * namespace in kernel tests (every call then runs on a thread that joined it); anything a unit test likes.
 */
public interface NodeNetwork extends AutoCloseable {
    /** Makes this process the only nftproxy writing this network's tables; a second one fails here, naming the first. */
    AutoCloseable lock() throws Exception;

    /** The addresses configured on the node's interfaces. */
    List<IpAddress> interfaceAddresses() throws Exception;

    /** Reports every change anyone else makes to our tables, and records every commit in the network in {@code ledger}. */
    AutoCloseable monitorTables(OwnProcesses own, CommitLedger ledger, TableChangeListener listener) throws Exception;

    /** Calls {@code onChange} when an interface address is added or removed. */
    AutoCloseable monitorAddresses(Runnable onChange, Consumer<Exception> onFailure) throws Exception;

    /** Deletes the conntrack entries of UDP flows whose endpoint is gone. */
    CleanupReport cleanConntrack(ProxyState v4, ProxyState v6) throws Exception;

    /** Runs {@code task} where the sockets it creates belong to this network (the health-check NodePort servers). */
    <T> T call(Callable<T> task) throws Exception;

    /** One line for logs. */
    String describe();

    /** Releases what the calls above keep for reuse (a named namespace's thread); the daemon calls it when it stops. */
    @Override default void close() {}

    /** The network namespace this process runs in. */
    static NodeNetwork host() { return new Namespace(null); }

    /** {@code /run/netns/NAME}, reached from threads that join it; the process itself stays where it is. */
    static NodeNetwork namespace(String name) { return new Namespace(Objects.requireNonNull(name)); }

    /** A network namespace: this process's own ({@code name == null}) or a named one. */
    final class Namespace implements NodeNetwork {
        private final String name;
        private final ConntrackCleaner conntrack = new ConntrackCleaner();
        /** Started on first use and kept: every sync's conntrack cleanup and address dump would otherwise start one. */
        private NetnsThread thread;

        private Namespace(String name) { this.name = name; }

        @Override public AutoCloseable lock() throws Exception { return NetnsLock.acquire(name); }

        @Override public List<IpAddress> interfaceAddresses() throws Exception {
            return call(AddressDump::dump).stream().map(InterfaceAddress::address).distinct().toList();
        }

        @Override public AutoCloseable monitorTables(OwnProcesses own, CommitLedger ledger, TableChangeListener listener) throws Exception {
            NftablesMonitor.Builder b = NftablesMonitor.builder().ownPids(own).ledger(ledger);
            if (name != null) b.netns(name);
            return b.start(listener);
        }

        @Override public AutoCloseable monitorAddresses(Runnable onChange, Consumer<Exception> onFailure) throws Exception {
            return AddressMonitor.start(name, onChange, onFailure);
        }

        @Override public CleanupReport cleanConntrack(ProxyState v4, ProxyState v6) throws Exception {
            return call(() -> conntrack.clean(v4, v6));
        }

        @Override public <T> T call(Callable<T> task) throws Exception {
            return name == null ? task.call() : thread().call(task);
        }

        private synchronized NetnsThread thread() throws IOException {
            if (thread == null) thread = NetnsThread.start(name);
            return thread;
        }

        @Override public synchronized void close() {
            if (thread != null) thread.close();
            thread = null;
        }

        @Override public String describe() { return name == null ? "this network namespace" : "network namespace " + name; }
    }
}
