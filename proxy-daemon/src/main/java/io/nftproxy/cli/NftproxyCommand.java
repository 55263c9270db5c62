package io.nftproxy.cli;

import io.nftproxy.build.BuildInfo;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintWriter;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;

/**
 * The top-level {@code nftproxy} command. Each subcommand is its own small class; the offline ones share
 * {@link NodeOptions} as a mixin, so they all take the same flags and load the same way.
 */
@Command(name = "nftproxy",
        mixinStandardHelpOptions = true,
        versionProvider = NftproxyCommand.Version.class,
        subcommands = {RenderCommand.class, TraceCommand.class, RunCommand.class, CleanupCommand.class,
                ConntrackCommand.class},
        description = {"Kubernetes service proxy for one node, programming nftables as kube-proxy's nftables mode does.",
                "",
                "As kube-proxy: flags with no command run the daemon, as 'nftproxy run' with the same flags does, so "
                        + "a kube-proxy command line (kubeadm's DaemonSet: --config=FILE --hostname-override=NAME) "
                        + "runs with the binary swapped. With no arguments at all, this help.",
                ""},
        footer = {"", "Exit codes: 0 done, 1 input unreadable (e.g. --manifests directory missing), 2 invalid flag "
                + "(run: also the config file or kubeconfig unreadable or malformed), "
                + "3 nft unavailable, 4 permission denied, 5 transaction refused (run, cleanup), 6 trace could not "
                + "follow the packet to an end, 7 the demo did not go as expected, 8 cleanup refused: a daemon runs here, "
                + "9 trace --kernel: the kernel's table sends the packet elsewhere than the cluster implies, 10 run "
                + "--dry-run: the API server unusable (the daemon never exits because of the API server: it retries).",
                "", "Start with:",
                "  sudo ./nftproxy demo       # in a source checkout; the release has no demo",
                "  nftproxy render --manifests examples --hostname-override k8s-node-1",
                "  nftproxy trace --manifests examples --hostname-override k8s-node-1 \\",
                "      --src 172.20.211.9 --dst 10.105.101.118 --proto tcp --dport 80"})
public final class NftproxyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** A configured command line, with every {@link PluggedCommand} on the class path; tests call this with their own writers. */
    public static CommandLine newCommandLine() {
        CommandLine cl = new CommandLine(new NftproxyCommand());
        for (PluggedCommand c : ServiceLoader.load(PluggedCommand.class, NftproxyCommand.class.getClassLoader())) cl.addSubcommand(c);
        cl.addSubcommand(new CommandLine.HelpCommand());
        // Each subcommand's --version says what the top-level one says (picocli prints nothing without a provider).
        for (CommandLine sub : cl.getSubcommands().values()) sub.getCommandSpec().versionProvider(new Version());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setUsageHelpAutoWidth(true);
        cl.setParameterExceptionHandler(new ShortUsageErrors());
        return cl;
    }

    /**
     * kube-proxy's command shape: {@code nftproxy --config=FILE ...}, with no command and a first argument that is
     * a flag other than the top level's own (-h, --help, -V, --version), is {@code nftproxy run --config=FILE ...},
     * so a kube-proxy command line runs with the binary swapped. Anything else is returned as it is.
     */
    public static String[] asKubeProxyCommandLine(String[] args) {
        if (args.length == 0 || !args[0].startsWith("-") || TOP_LEVEL_OPTIONS.contains(args[0])) return args;
        String[] run = new String[args.length + 1];
        run[0] = "run";
        System.arraycopy(args, 0, run, 1, args.length);
        return run;
    }

    private static final java.util.Set<String> TOP_LEVEL_OPTIONS = java.util.Set.of("-h", "--help", "-V", "--version");

    /** Without a subcommand there is nothing to do: show what there is. */
    @Override public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("nftproxy: missing subcommand");
        spec.commandLine().usage(err);
        return ExitCodes.USAGE;
    }

    /**
     * Prints the problem and a pointer to {@code --help} instead of the whole usage text, which would bury the one
     * line that matters.
     */
    static final class ShortUsageErrors implements IParameterExceptionHandler {
        @Override public int handleParseException(ParameterException ex, String[] args) {
            CommandLine cl = ex.getCommandLine();
            PrintWriter err = cl.getErr();
            err.println(cl.getColorScheme().errorText("nftproxy: " + ex.getMessage()));
            if (!UnmatchedArgumentException.printSuggestions(ex, err)) {
                err.println("Try '" + cl.getCommandSpec().qualifiedName() + " --help' for more information.");
            }
            return ExitCodes.USAGE;
        }
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override public String[] getVersion() { return new String[] {"nftproxy " + BuildInfo.current()}; }
    }
}
