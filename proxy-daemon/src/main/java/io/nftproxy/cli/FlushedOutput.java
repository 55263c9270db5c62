package io.nftproxy.cli;

import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;

/**
 * Runs a command's body with the command line's writers and flushes both when it returns or throws: tests hand in
 * buffered writers, and a line lost at exit is a line an operator never sees.
 */
final class FlushedOutput {
    @FunctionalInterface
    interface Body {
        int run(PrintWriter out, PrintWriter err);
    }

    private FlushedOutput() {}

    static int run(CommandSpec spec, Body body) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            return body.run(out, err);
        } finally {
            out.flush();
            err.flush();
        }
    }
}
