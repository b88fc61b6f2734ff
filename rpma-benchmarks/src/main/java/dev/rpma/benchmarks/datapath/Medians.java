package dev.rpma.benchmarks.datapath;

/** The median the data-path benchmarks report of their rounds. */
final class Medians {

    private Medians() {
    }

    /** The median of {@code sorted}, ascending; the mean of the middle two for an even count. */
    static double of(double[] sorted) {
        int n = sorted.length;
        return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
