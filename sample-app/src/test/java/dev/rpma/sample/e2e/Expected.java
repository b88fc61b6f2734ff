package dev.rpma.sample.e2e;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the clients of one test did, as the changes the app's numbers must show: per endpoint, the
 * requests accepted and rejected by reason, the connections that ended, and the ping-pong rounds
 * and sessions. Keys as in {@link AppNumbers}.
 *
 * <p>ESTABLISHED is not among them: the server sees it when the client's RTU arrives, and a client
 * that disconnects at once (hello, read) can have its DREQ processed first when the RTU is lost or
 * late, so the server sees only CLOSED for a connection its client used (observed under soft-RoCE,
 * 2 of 400 connections in one run). {@link AppNumbers#established} is checked as a bound instead.
 */
final class Expected {

    static final List<String> ENDPOINTS = List.of("default", "read", "pingpong");

    static final List<String> REJECT_REASONS = List.of("handler", "queue-full", "handler-failed", "deadline", "paused",
            "shutdown");

    private final Map<String, Long> accepted = new TreeMap<>();

    private final Map<String, Long> rejected = new TreeMap<>();

    private long rounds;

    private long sessionsDone;

    private long sessionsClosed;

    synchronized Expected accepted(String endpoint) {
        this.accepted.merge(endpoint, 1L, Long::sum);
        return this;
    }

    synchronized Expected rejected(String endpoint, String reason) {
        this.rejected.merge(endpoint + " " + reason, 1L, Long::sum);
        return this;
    }

    /** A ping-pong session that ended with I_M_DONE. */
    synchronized Expected pingPong(long rounds) {
        accepted("pingpong");
        this.rounds += rounds;
        this.sessionsDone++;
        return this;
    }

    /** A ping-pong session whose connection closed before I_M_DONE. */
    synchronized Expected pingPongClosed(long rounds) {
        accepted("pingpong");
        this.rounds += rounds;
        this.sessionsClosed++;
        return this;
    }

    /** The changes every source must show. */
    synchronized Map<String, Long> changes() {
        Map<String, Long> changes = new TreeMap<>();
        for (String endpoint : ENDPOINTS) {
            long accepted = this.accepted.getOrDefault(endpoint, 0L);
            long rejectedTotal = 0;
            for (String source : AppNumbers.SOURCES) {
                changes.put(source + " " + endpoint + " accepted", accepted);
                changes.put(source + " " + endpoint + " closed+lost", accepted);
            }
            for (String reason : REJECT_REASONS) {
                long rejected = this.rejected.getOrDefault(endpoint + " " + reason, 0L);
                rejectedTotal += rejected;
                for (String source : AppNumbers.SOURCES) {
                    changes.put(source + " " + endpoint + " rejected " + reason, rejected);
                }
            }
            changes.put("rpma " + endpoint + " obtained", accepted + rejectedTotal);
            changes.put("rpma " + endpoint + " failed-to-connect", 0L);
        }
        changes.put("prometheus sample_pingpong_rounds", this.rounds);
        changes.put("prometheus sample_pingpong_sessions done", this.sessionsDone);
        changes.put("prometheus sample_pingpong_sessions closed", this.sessionsClosed);
        changes.put("prometheus sample_pingpong_sessions failed", 0L);
        return changes;
    }

    @Override
    public synchronized String toString() {
        return "accepted " + this.accepted + ", rejected " + this.rejected + ", ping-pong rounds " + this.rounds
                + ", sessions done " + this.sessionsDone + ", closed " + this.sessionsClosed;
    }
}
