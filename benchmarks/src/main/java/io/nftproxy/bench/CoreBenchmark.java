package io.nftproxy.bench;

import io.nftproxy.diff.Differ;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;
import io.nftproxy.sync.TableModel;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The pure core at 1k/10k/50k services x 10 endpoints: full render, no-op full diff, script writing of the whole
 * table, and one endpoint move through {@link TableModel} (render of the changed port plus its diff).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgs = {"-Xmx3g"})
public class CoreBenchmark {
    @Param({"1000", "10000", "50000"})
    public int services;

    /** {@link TableLayout}'s command-line spelling; {@code -p layout=fast} runs one. */
    @Param({"upstream", "fast"})
    public String layout;

    private Renderer renderer;
    private BenchCluster cluster;
    private ProxyState state;
    private TableContent table;
    private TableModel incremental;
    private int next;

    @Setup
    public void setup() {
        renderer = new Renderer(TableLayout.parse(layout));
        cluster = new BenchCluster(10);
        state = cluster.state(services);
        table = renderer.render(state, BenchCluster.node()).table();
        incremental = new TableModel(renderer, IpFamily.IPV4, BenchCluster.node());
        incremental.sync(state, BenchCluster.node());
    }

    @Benchmark
    public TableContent renderFull() { return renderer.render(state, BenchCluster.node()).table(); }

    @Benchmark
    public Differ.Diff diffNoop() { return Differ.diff(table, table); }

    @Benchmark
    public String scriptFull() { return Transaction.creating(table).script(Capabilities.baseline()); }

    @Benchmark
    public Differ.Diff incrementalMoveEndpoint() {
        ServicePort sp = BenchCluster.service(next++ % services);
        List<io.nftproxy.service.Endpoint> eps = cluster.endpoints(10);
        return incremental.update(List.of(new TableModel.Change(sp.name(), sp, eps)));
    }
}
