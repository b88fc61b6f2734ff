package dev.rpma.server;

/**
 * The token bucket of {@link RpmaEndpointSettings.RequestRate}, kept as the time at which the
 * bucket would be full again (the generic cell rate algorithm): whole nanoseconds, so that a request
 * exactly one interval after the last always finds its permit, which sums of fractional permits in
 * floating point do not promise. Full at first. The caller passes the time, so a test drives it with
 * a clock of its own. Not thread-safe: one acceptor thread asks it.
 */
final class RequestRateLimiter {

    /** Keeps every sum and difference of times far from overflowing, even for a rate of one a century. */
    private static final long MAX_NANOS = Long.MAX_VALUE / 8;

    /** Nanoseconds in which one permit comes back. */
    private final long interval;

    /** How far ahead of now the full-again time may be: (burst - 1) intervals. */
    private final long tolerance;

    /** When the bucket is full again if no permit is taken meanwhile (in the past: full now). */
    private long fullAt;

    RequestRateLimiter(RpmaEndpointSettings.RequestRate rate, long nowNanos) {
        this.interval = (long) Math.max(1, Math.min(MAX_NANOS, Math.rint(1e9 / rate.perSecond())));
        this.tolerance = (long) Math.min(MAX_NANOS, (rate.burst() - 1) * (double) this.interval);
        this.fullAt = nowNanos;
    }

    /** Takes a permit at {@code nowNanos} ({@link System#nanoTime()}'s scale); {@code false} when there is none. */
    boolean tryAcquire(long nowNanos) {
        long from = (this.fullAt - nowNanos > 0) ? this.fullAt : nowNanos;
        if (from - nowNanos > this.tolerance) {
            return false;
        }
        this.fullAt = from + this.interval;
        return true;
    }
}
