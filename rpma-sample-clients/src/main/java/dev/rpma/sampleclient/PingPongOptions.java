package dev.rpma.sampleclient;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.jspecify.annotations.Nullable;

/**
 * A ping-pong session of 08-messages-ping-pong: {@code rounds} exchanges starting at {@code seed}, then,
 * before the final {@code I_M_DONE}, an optional hold of the established connection (to keep a
 * server's handler busy, or to be killed mid-connection).
 *
 * @param seed the first value sent
 * @param rounds exchanges; each sends a value and expects it plus one back
 * @param hold how long to keep the connection before finishing ({@link Duration#ZERO}: not at all)
 * @param release ends the hold early when counted down; may be {@code null}
 * @param onHold runs when the hold starts; may be {@code null}
 */
public record PingPongOptions(long seed, int rounds, Duration hold, @Nullable CountDownLatch release,
        @Nullable Runnable onHold) {

    public PingPongOptions {
        if (rounds < 0) {
            throw new IllegalArgumentException("rounds must not be negative, got " + rounds);
        }
        if (hold == null || hold.isNegative()) {
            throw new IllegalArgumentException("hold must be zero or positive, got " + hold);
        }
    }

    /** {@code rounds} exchanges from {@code seed}, no hold. */
    public static PingPongOptions of(long seed, int rounds) {
        return new PingPongOptions(seed, rounds, Duration.ZERO, null, null);
    }

    /** The same run, holding the connection for up to {@code hold} before finishing. */
    public PingPongOptions holding(Duration hold, @Nullable CountDownLatch release, @Nullable Runnable onHold) {
        return new PingPongOptions(this.seed, this.rounds, hold, release, onHold);
    }
}
