package io.nftproxy.trace;

/**
 * An exact probability {@code numerator/denominator}, kept reduced: a branch's odds are the product of its random
 * picks' odds, and exact fractions let tests compare the two layouts' odds without a tolerance.
 */
public record Probability(long numerator, long denominator) {
    public static final Probability ONE = new Probability(1, 1);
    public static final Probability ZERO = new Probability(0, 1);

    public Probability {
        if (denominator <= 0 || numerator < 0 || numerator > denominator) {
            throw new IllegalArgumentException("not a probability: " + numerator + "/" + denominator);
        }
        long g = gcd(numerator, denominator);
        numerator /= g;
        denominator /= g;
    }

    public Probability times(Probability o) {
        long g1 = gcd(numerator, o.denominator), g2 = gcd(o.numerator, denominator);
        return new Probability(Math.multiplyExact(numerator / g1, o.numerator / g2),
                Math.multiplyExact(denominator / g2, o.denominator / g1));
    }

    public Probability plus(Probability o) {
        long g = gcd(denominator, o.denominator);
        long den = Math.multiplyExact(denominator / g, o.denominator);
        long num = Math.addExact(Math.multiplyExact(numerator, o.denominator / g), Math.multiplyExact(o.numerator, denominator / g));
        return new Probability(num, den);
    }

    @Override public String toString() { return numerator == denominator ? "1" : numerator + "/" + denominator; }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a == 0 ? 1 : a;
    }
}
