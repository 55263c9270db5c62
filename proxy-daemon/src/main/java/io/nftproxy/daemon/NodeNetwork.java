package io.nftproxy.daemon;

import io.nftproxy.conntrack.CleanupReport;
import io.nftproxy.conntrack.ConntrackCleaner;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.lock.NetnsLock;
import io.nftproxy.netlink.monitor.NftablesMonitor;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.monitor.CommitLedger;
import io.nftproxy.netlink.monitor.TableChangeListener;
import io.nftproxy.netlink.rt.AddressDump;
import io.nftproxy.netlink.rt.AddressMonitor;
import io.nftproxy.netlink.rt.InterfaceAddress;
import io.nftproxy.net.IpAddress;
import io.nftproxy.service.ProxyState;
import io.nftproxy.sync.SyncEngine;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * The node's network as the daemon uses it, apart from nftables: what a sync needs of it ({@link SyncEngine.NodeAccess}:
 * addresses, conntrack, where sockets are created), and the lock and the monitors of addresses and tables. The daemon's own namespace in production; a named network
 * namespace in kernel tests (every call then runs on a thread that joined it); anything a unit test likes.
 */
public interface NodeNetwork extends SyncEngine.NodeAccess, AutoCloseable {
    /** Makes this process the only nftproxy writing this network's tables; a second one fails here, naming the first. */
    AutoCloseable lock() throws Exception;

    /** Reports every change anyone else makes to our tables, and records every commit in the network in {@code ledger}. */
    AutoCloseable monitorTables(OwnProcesses own, CommitLedger ledger, TableChangeListener listener) throws Exception;

    /** Calls {@code onChange} when an interface address is added or removed. */
    AutoCloseable monitorAddresses(Runnable onChange, Consumer<Exception> onFailure) throws Exception;

    /** One line for logs. */
    String describe();

    /** Releases what the calls above keep for reuse (a named namespace's thread); the daemon calls it when it stops. */
    @Override default void close() {}

    /** The network namespace this process runs in. */
    static NodeNetwork host() { return namespace(NetworkNamespace.host()); }

    /** {@code netns}; a named one is reached from threads that join it, the process itself stays where it is. */
    static NodeNetwork namespace(NetworkNamespace netns) { return new Namespace(Objects.requireNonNull(netns)); }

    /** A network namespace: this process's own or a named one. */
    final class Namespace implements NodeNetwork {
        private final NetworkNamespace netns;
        private final ConntrackCleaner conntrack = new ConntrackCleaner();
        /** Keeps its thread: every sync's conntrack cleanup and address dump would otherwise start one. */
        private final NetworkNamespace.Session session;

        private Namespace(NetworkNamespace netns) {
            this.netns = netns;
            this.session = netns.session();
        }

        @Override public AutoCloseable lock() throws Exception { return NetnsLock.acquire(netns); }

        @Override public List<IpAddress> interfaceAddresses() throws Exception {
            return call(AddressDump::dump).stream().map(InterfaceAddress::address).distinct().toList();
        }

        @Override public AutoCloseable monitorTables(OwnProcesses own, CommitLedger ledger, TableChangeListener listener) throws Exception {
            return NftablesMonitor.builder().netns(netns).ownPids(own).ledger(ledger).start(listener);
        }

        @Override public AutoCloseable monitorAddresses(Runnable onChange, Consumer<Exception> onFailure) throws Exception {
            return AddressMonitor.start(netns, onChange, onFailure);
        }

        @Override public CleanupReport cleanConntrack(ProxyState v4, ProxyState v6) throws Exception {
            return call(() -> conntrack.clean(v4, v6));
        }

        /** Failures by {@link NetworkNamespace#call}'s rule. */
        @Override public <T> T call(Callable<T> task) throws Exception { return session.call(task); }

        @Override public void close() { session.close(); }

        @Override public String describe() { return netns.describe(); }
    }
}
