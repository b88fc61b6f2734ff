package dev.rpma.sampleclient;

import java.time.Duration;

/**
 * What a ping-pong run did.
 *
 * @param rounds exchanges completed
 * @param seed the first value sent
 * @param lastReply the last value the server sent back ({@code seed + rounds}), or {@code seed} after no round
 * @param exchange time spent in the exchanges (without connecting, holding and closing)
 */
public record PingPongResult(int rounds, long seed, long lastReply, Duration exchange) {

    /** Mean round-trip time of one exchange, or {@link Duration#ZERO} after no round. */
    public Duration meanRoundTrip() {
        return (this.rounds == 0) ? Duration.ZERO : this.exchange.dividedBy(this.rounds);
    }
}
