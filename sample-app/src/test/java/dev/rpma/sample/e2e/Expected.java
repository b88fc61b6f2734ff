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

    static final List<String> REJECT_REASONS = List.of("handler", "queue-full", "capacity", "handler-failed",
            "deadline", "paused", "shutdown", "unauthenticated", "rate-limited");

    /** How sessions end; which of closed, closed-by-server and lost a clean exchange gives is a race. */
    static final List<String> END_REASONS = List.of("closed", "closed-by-server", "lost", "idle", "error", "capacity",
            "shutdown");

    static final List<String> BAD_MESSAGES = List.of("oversized", "empty", "malformed");

    private final Map<String, Long> accepted = new TreeMap<>();

    private final Map<String, Long> rejected = new TreeMap<>();

    private long rounds;

    private long sessionsDone;

    private long sessionsClosed;

    private long sessionsDoneOrClosed;

    private long sessionsFailed;

    private final Map<String, Long> endedAs = new TreeMap<>();

    private final Map<String, Long> bad = new TreeMap<>();

    synchronized Expected accepted(String endpoint) {
        return accepted(endpoint, 1);
    }

    synchronized Expected accepted(String endpoint, long sessions) {
        this.accepted.merge(endpoint, sessions, Long::sum);
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

    /**
     * A ping-pong session of a client that sends I_M_DONE and disconnects at once, as librpma's
     * example client does: its I_M_DONE may be flushed by its own disconnect, so the session ends
     * done or closed.
     */
    synchronized Expected pingPongDoneOrClosed(long rounds) {
        accepted("pingpong");
        this.rounds += rounds;
        this.sessionsDoneOrClosed++;
        return this;
    }

    /** A ping-pong session the server ended for a bad message of {@code kind} (no rounds). */
    synchronized Expected pingPongBadMessage(String kind) {
        accepted("pingpong");
        this.sessionsFailed++;
        this.bad.merge(kind, 1L, Long::sum);
        endedAs("pingpong", "error");
        return this;
    }

    /** One session of {@code endpoint} ended for {@code reason}, among those accepted. */
    synchronized Expected endedAs(String endpoint, String reason) {
        this.endedAs.merge(endpoint + " " + reason, 1L, Long::sum);
        return this;
    }

    /**
     * The changes every source must show (others may change too: the reasons a clean session ended
     * for are a race, and are compared only where a test says so with {@link #endedAs}).
     */
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
            changes.put("rpma " + endpoint + " ended", accepted);
            for (String reason : List.of("idle", "error", "capacity", "shutdown")) {
                long count = this.endedAs.getOrDefault(endpoint + " " + reason, 0L);
                for (String source : AppNumbers.SOURCES) {
                    changes.put(source + " " + endpoint + " ended " + reason, count);
                }
            }
        }
        for (String kind : BAD_MESSAGES) {
            changes.put("prometheus pingpong bad " + kind, this.bad.getOrDefault(kind, 0L));
        }
        changes.put("prometheus sample_pingpong_rounds", this.rounds);
        if (this.sessionsDoneOrClosed == 0) {
            changes.put("prometheus sample_pingpong_sessions done", this.sessionsDone);
            changes.put("prometheus sample_pingpong_sessions closed", this.sessionsClosed);
        }
        changes.put("prometheus sample_pingpong_sessions done+closed",
                this.sessionsDone + this.sessionsClosed + this.sessionsDoneOrClosed);
        changes.put("prometheus sample_pingpong_sessions failed", this.sessionsFailed);
        return changes;
    }

    @Override
    public synchronized String toString() {
        return "accepted " + this.accepted + ", rejected " + this.rejected + ", ping-pong rounds " + this.rounds
                + ", sessions done " + this.sessionsDone + ", closed " + this.sessionsClosed + ", done or closed "
                + this.sessionsDoneOrClosed + ", failed " + this.sessionsFailed + ", bad messages " + this.bad
                + ", ended as " + this.endedAs;
    }
}
