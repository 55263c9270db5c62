package io.nftproxy.demo;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.cli.PluggedCommand;
import io.nftproxy.netlink.Commands;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code nftproxy demo}: the newcomer's first run; the work is {@link Demo}'s, this class is flags and exit codes. */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {"Show nftproxy at work on a throwaway cluster made of network namespaces: a node (k8s-node-1) "
                + "with one hello pod and a pod client, a second node with two hello pods, an external client. "
                + "Runs the daemon on the example manifests, shows the rules it wrote, sends real requests to a "
                + "ClusterIP and a NodePort, scales a service down and shows the change, then deletes everything.",
                "",
                "Nothing is added to this host's own network: every address, route and rule is inside namespaces "
                        + "named nftp-demo-<pid>-<role>. Needs root. Takes a few seconds.",
                ""},
        footer = {"", "Examples:",
                "  nftproxy demo",
                "  nftproxy demo --keep --requests 100",
                "", "Exit codes: 0 done and every request answered by the expected backends, 2 invalid flag, "
                + "3 ip, nft or sysctl missing, 4 not root, 7 a step failed or traffic went astray (cleaned up all the same)."})
public final class DemoCommand implements Callable<Integer>, PluggedCommand {
    @Spec
    CommandSpec spec;

    @Option(names = "--requests", paramLabel = "N", defaultValue = "30",
            description = {"Requests per measurement (1.." + Demo.MAX_REQUESTS + "). Default: ${DEFAULT-VALUE}."})
    int requests;

    @Option(names = "--keep",
            description = "Leave the namespaces and the node's rules in place to explore; prints how to look around and how to delete them.")
    boolean keep;

    @Override public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (requests < 1 || requests > Demo.MAX_REQUESTS) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--requests': " + requests
                    + " (allowed: 1.." + Demo.MAX_REQUESTS + ")");
        }
        if (!Commands.isRoot()) {
            err.println("nftproxy demo: needs root: it creates network namespaces and programs nftables in them "
                    + "(try: sudo ./nftproxy demo)");
            return ExitCodes.PERMISSION_DENIED;
        }
        String missing = Topology.unavailabilityCause();
        if (missing != null) {
            err.println("nftproxy demo: cannot run: " + missing);
            return ExitCodes.NFT_UNAVAILABLE;
        }
        Demo demo = new Demo(out, new Demo.Options(requests, keep));
        Thread hook = new Thread(() -> {
            out.println();
            out.println("interrupted: cleaning up");
            demo.close();
        }, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return demo.run() ? ExitCodes.OK : ExitCodes.DEMO_FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("nftproxy demo: stopped");
            return ExitCodes.DEMO_FAILED;
        } catch (Exception e) {
            err.println("nftproxy demo: failed: " + e.getMessage());
            return ExitCodes.DEMO_FAILED;
        } finally {
            demo.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException alreadyShuttingDown) {
                // The hook is running or has run; it cleans up.
            }
            out.flush();
            err.flush();
        }
    }
}
