package dev.rpma.spring.boot.actuate;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition that other threads make true, with a generous deadline that only bounds a
 * hung test; it asserts nothing about how long anything took.
 */
public final class Await {

    /** How long before a wait is considered hung. */
    public static final Duration TIMEOUT = Duration.ofSeconds(30);

    private Await() {
    }

    public static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("Still waiting after " + TIMEOUT + " for " + what);
            }
            try {
                Thread.sleep(2);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new AssertionError("Interrupted while waiting for " + what, ex);
            }
        }
    }
}
