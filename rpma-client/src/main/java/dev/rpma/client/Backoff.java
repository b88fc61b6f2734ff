package dev.rpma.client;

import java.time.Duration;

/**
 * Exponential back-off between connection attempts: {@code initial}, then times {@code multiplier}
 * after each failure in a row, at most {@code max}. No jitter: each connection of a pool starts its
 * own schedule when it fails, and the schedule is what the tests assert.
 */
record Backoff(Duration initial, Duration max, double multiplier) {

    Backoff {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0 || multiplier < 1) {
            throw new IllegalArgumentException("Back-off needs 0 < initial <= max and multiplier >= 1, got " + initial
                    + ", " + max + ", " + multiplier);
        }
    }

    /** The delay before attempt {@code failures + 1}, after {@code failures} (1 or more) failures in a row. */
    Duration delay(int failures) {
        double nanos = this.initial.toNanos() * Math.pow(this.multiplier, Math.max(0, failures - 1));
        return (nanos >= this.max.toNanos()) ? this.max : Duration.ofNanos((long) nanos);
    }
}
