package io.nftproxy.cli;

import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import io.nftproxy.config.LocalDetection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code nftproxy render}: prints the {@code nft -f} script that creates the {@code kube-proxy} table(s) for the
 * given node. Needs no kernel and changes nothing. Stdout carries only the script, so it can be piped to
 * {@code nft -c -f -}; every warning goes to stderr.
 */
@Command(name = "render",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        showDefaultValues = false,
        description = {"Print the nft script that creates the kube-proxy table(s) for one node.",
                "",
                "Reads a directory of manifests, or with --kubeconfig the live cluster (listed once); needs no kernel and changes nothing. The script goes to stdout (load "
                        + "it with 'nft -f'); warnings about skipped objects go to stderr, one line each: "
                        + "'warning: skipped kind=... object=... field=... reason=...'.",
                ""},
        footer = {"", "Examples:",
                "  nftproxy render --manifests examples --hostname-override k8s-node-1",
                "  nftproxy render --manifests examples --hostname-override k8s-node-1 \\",
                "      --cluster-cidr 172.20.0.0/16 --ip-family ipv4",
                "  # check that the kernel accepts it, in a throwaway network namespace (root):",
                "  nftproxy render --manifests examples --hostname-override k8s-node-1 \\",
                "      | unshare -n nft -c -f -",
                "  # the live cluster, as this node's nftproxy would program it:",
                "  nftproxy render --kubeconfig /etc/nftproxy/kubeconfig \\",
                "      --hostname-override \"$(hostname)\"",
                "", "Exit codes: 0 rendered, 1 --manifests or the API server unreadable, 2 invalid flag."})
public final class RenderCommand implements Callable<Integer> {
    /** Which tables to print. */
    enum Families {
        ipv4(List.of(IpFamily.IPV4)), ipv6(List.of(IpFamily.IPV6)), both(List.of(IpFamily.IPV4, IpFamily.IPV6));

        final List<IpFamily> families;

        Families(List<IpFamily> families) { this.families = families; }
    }

    @Spec
    CommandSpec spec;

    @Mixin
    NodeOptions nodeOptions;

    @Mixin
    LiveCluster liveCluster;

    @Mixin
    LocalDetectorFlags localDetector;

    @Option(names = "--ip-family", paramLabel = "ipv4|ipv6|both", defaultValue = "both",
            description = {"Which tables to print: 'table ip kube-proxy', 'table ip6 kube-proxy', or both (ip first).",
                    "Default: ${DEFAULT-VALUE}."})
    Families ipFamily;

    @Override public Integer call() { return FlushedOutput.run(spec, this::render); }

    private int render(PrintWriter out, PrintWriter err) {
        NodeOptions.Rendered rendered = nodeOptions.render(err, liveCluster, localDetector.over(LocalDetection.DEFAULT));
        if (rendered == null) return ExitCodes.INPUT_UNREADABLE;
        for (IpFamily f : ipFamily.families) {
            out.print(Transaction.creating(rendered.rendering().table(f)).script(Capabilities.baseline()));
        }
        return ExitCodes.OK;
    }
}
