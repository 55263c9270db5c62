package io.nftproxy.random;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Runs a check over random clusters: first a fixed list of regression seeds, then new seeds, {@code base},
 * {@code base + 1}, …, with {@code base} from the clock, until a time budget runs out. The budget is the system
 * property {@value #BUDGET_PROPERTY} (seconds) when set, else the caller's default; {@value #SEED_PROPERTY} runs
 * that one seed only (to replay a failure). The base seed is printed before the first cluster, so any run can be
 * repeated. The first cluster the check finds problems in is shrunk ({@link ClusterShrinker}) and the run fails
 * with its seed, the minimal cluster's problems and its manifests, also written to
 * {@code target/random-clusters/NAME-seed-SEED.yaml} for {@code nftproxy render --manifests}. A check that is
 * slow per cluster (one against kube-proxy in the kernel) bounds the shrinking in tries and in time.
 */
public final class SeedRunner {
    public static final String BUDGET_PROPERTY = "nftproxy.randomClusters.seconds";
    public static final String SEED_PROPERTY = "nftproxy.randomClusters.seed";
    /** ClusterShrinker's own bound: enough for an in-process check, whose tries cost milliseconds. */
    static final int DEFAULT_SHRINK_TRIES = 5_000;
    static final Path REPORT_DIR = Path.of("target", "random-clusters");

    private SeedRunner() {}

    /** What a run did: clusters checked (regression seeds included), their Services, the time it took. */
    public record Result(int clusters, long services, Duration elapsed, long baseSeed) {
        public double clustersPerSecond() { return clusters / Math.max(1e-3, elapsed.toNanos() / 1e9); }

        @Override public String toString() {
            return String.format("%d clusters (%d Services) in %.1f s, %.1f clusters/s, new seeds from %d", clusters,
                    services, elapsed.toMillis() / 1000.0, clustersPerSecond(), baseSeed);
        }
    }

    /**
     * @param name        names the report file and the printed lines
     * @param regressions seeds that found bugs before, always run first
     * @param generate    the cluster of a seed
     * @param problems    what is wrong with a cluster; empty when nothing is
     */
    public static Result run(String name, List<Long> regressions, Duration defaultBudget, LongFunction<RandomCluster> generate,
                             Function<RandomCluster, List<String>> problems) {
        return run(name, regressions, defaultBudget, DEFAULT_SHRINK_TRIES, null, generate, problems);
    }

    /**
     * As above, the shrinking of a failure checking at most {@code shrinkTries} smaller clusters and starting no
     * check after {@code shrinkBudget} (null: no time bound); the smallest failing cluster found by then is reported.
     */
    public static Result run(String name, List<Long> regressions, Duration defaultBudget, int shrinkTries, Duration shrinkBudget,
                             LongFunction<RandomCluster> generate, Function<RandomCluster, List<String>> problems) {
        long t0 = System.nanoTime();
        String only = System.getProperty(SEED_PROPERTY);
        long base = only != null ? Long.parseLong(only.strip()) : System.currentTimeMillis() * 1_000 + (System.nanoTime() & 0x3ff);
        Duration budget = budget(defaultBudget);
        System.out.println(name + ": regression seeds " + regressions + ", then new seeds from " + base + " for "
                + budget.toSeconds() + " s (-D" + SEED_PROPERTY + "=SEED replays one, -D" + BUDGET_PROPERTY + "=S sets the budget)");
        int clusters = 0;
        long services = 0;
        if (only == null) {
            for (long seed : regressions) {
                services += check(name, generate.apply(seed), problems, shrinkTries, shrinkBudget);
                clusters++;
            }
        }
        long deadline = t0 + budget.toNanos();
        for (long seed = base; ; seed++) {
            services += check(name, generate.apply(seed), problems, shrinkTries, shrinkBudget);
            clusters++;
            if (only != null || System.nanoTime() > deadline) break;
        }
        Result r = new Result(clusters, services, Duration.ofNanos(System.nanoTime() - t0), base);
        System.out.println(name + ": " + r);
        return r;
    }

    /** The fewest clusters a run checks: the one seed when replaying one, else the regression seeds and a new one. */
    public static int minimumClusters(List<Long> regressions) {
        return System.getProperty(SEED_PROPERTY) != null ? 1 : regressions.size() + 1;
    }

    static Duration budget(Duration defaultBudget) {
        String s = System.getProperty(BUDGET_PROPERTY);
        if (s == null || s.isBlank()) return defaultBudget;
        try {
            return Duration.ofMillis(Math.round(Double.parseDouble(s.strip()) * 1000));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("-D" + BUDGET_PROPERTY + "=" + s + " is not a number of seconds", e);
        }
    }

    private static int check(String name, RandomCluster c, Function<RandomCluster, List<String>> problems, int shrinkTries,
                             Duration shrinkBudget) {
        List<String> found = safely(problems, c);
        if (found.isEmpty()) return c.services().size();
        System.out.println(name + ": " + found.size() + " problem(s) in " + c.summary() + ", shrinking (at most "
                + shrinkTries + " tries" + (shrinkBudget == null ? "" : ", " + shrinkBudget.toSeconds() + " s") + "); the first: " + found.get(0));
        long end = shrinkBudget == null ? Long.MAX_VALUE : System.nanoTime() + shrinkBudget.toNanos();
        // Past the time bound a candidate counts as passing: the shrinker then keeps what it has.
        RandomCluster minimal = ClusterShrinker.shrink(c, x -> System.nanoTime() - end < 0 && !safely(problems, x).isEmpty(), shrinkTries);
        throw new AssertionError(report(name, c, minimal, safely(problems, minimal)));
    }

    /** The problems, with an exception counted as one: a crash is a finding too, and the shrinker must see it. */
    private static List<String> safely(Function<RandomCluster, List<String>> problems, RandomCluster c) {
        try {
            return problems.apply(c);
        } catch (RuntimeException | StackOverflowError e) {
            return List.of("threw " + e);
        }
    }

    /** The failure message: seed, original size, the minimal cluster's problems and manifests, and where they are. */
    static String report(String name, RandomCluster original, RandomCluster minimal, List<String> problems) {
        String yaml = ManifestYaml.of(minimal);
        String where;
        try {
            where = ManifestYaml.write(minimal, REPORT_DIR.resolve(name + "-seed-" + original.seed())).toString();
        } catch (IOException e) {
            where = "(not written: " + e.getMessage() + ")";
        }
        String text = name + " failed for " + original.summary() + "\nshrunk to " + minimal.services().size()
                + " Services, " + minimal.slices().size() + " EndpointSlices (" + where + "), replay with -D"
                + SEED_PROPERTY + "=" + original.seed() + "; " + problems.size() + " problem(s), first ones:\n"
                + String.join("\n", problems.subList(0, Math.min(3, problems.size()))) + "\n" + yaml;
        System.out.println(text);
        return text;
    }
}
