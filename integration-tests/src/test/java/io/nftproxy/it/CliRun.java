package io.nftproxy.it;

import io.nftproxy.cli.NftproxyCommand;
import io.nftproxy.netlink.KernelNamespace;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** One {@code nftproxy} command line and what it printed and returned: in-process, or in a child JVM. */
public record CliRun(int exit, String out, String err) {
    /** Runs {@code args} in this JVM through the real command line, capturing stdout and stderr. */
    public static CliRun of(List<String> args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        CommandLine cl = NftproxyCommand.newCommandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args.toArray(String[]::new));
        return new CliRun(exit, out.toString(), err.toString());
    }

    public static CliRun of(String... args) { return of(List.of(args)); }

    /** {@code setpriv} (util-linux), or empty where it is not installed. */
    public static Optional<String> setpriv() {
        return List.of("/usr/bin/setpriv", "/bin/setpriv").stream().filter(p -> Files.isExecutable(Path.of(p))).findFirst();
    }

    /**
     * Runs {@code args} in a child JVM without CAP_NET_ADMIN (dropped from its bounding set; it keeps CAP_SYS_ADMIN
     * to join a namespace), which is how a permission error is met as root.
     */
    public static CliRun withoutNetAdmin(String setpriv, List<String> args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> argv = new ArrayList<>(List.of(setpriv, "--bounding-set", "-net_admin", java, "-cp",
                System.getProperty("java.class.path"), "io.nftproxy.cli.Main"));
        argv.addAll(args);
        KernelNamespace.Result r = KernelNamespace.run(Duration.ofSeconds(60), null, argv.toArray(String[]::new));
        return new CliRun(r.exitCode(), r.stdout(), r.stderr());
    }
}
