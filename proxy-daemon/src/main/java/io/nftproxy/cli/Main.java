package io.nftproxy.cli;

/** Entry point of {@code nftproxy.jar}. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.exit(NftproxyCommand.newCommandLine().execute(args));
    }
}
