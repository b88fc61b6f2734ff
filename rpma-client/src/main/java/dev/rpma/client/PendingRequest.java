package dev.rpma.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * One request, message or exchange of an {@link RpmaClient}, from the call to its future's
 * completion. Handed from the calling thread to a connection's loop through the loop's task queue
 * (which publishes it); from then on read and written only on the loop of the connection that holds
 * it, and moved to another connection only by that loop. It is itself the task that hands it over
 * ({@link #run}), so that a request costs no task object besides.
 */
final class PendingRequest implements Runnable {

    enum Kind {
        /** Framed REQUEST: a REPLY or ERROR answers it. */
        REQUEST,
        /** Framed one-way MESSAGE: done when posted. */
        MESSAGE,
        /** Raw message: done when posted. */
        RAW_SEND,
        /** Raw message whose answer is the next message the server sends. */
        RAW_EXCHANGE
    }

    final Kind kind;

    /** The route, UTF-8; empty in raw mode. */
    final byte[] route;

    final String routeText;

    final byte[] payload;

    final boolean idempotent;

    final Duration timeout;

    final long startNanos;

    final long deadlineNanos;

    /** Its observation ({@link RpmaRequestObserver}), or {@code null}. */
    final RpmaRequestObserver.@Nullable Observed observed;

    final CompletableFuture<byte[]> future = new CompletableFuture<>();

    /** The connection it is counted on ({@link ClientConnection#load}). */
    @Nullable ClientConnection owner;

    /** Its place in its connection's {@link RequestDeadlines}, -1 while none watches its timeout. */
    int deadlineIndex = -1;

    /** The id of its REQUEST on its current connection, -1 before it was sent. */
    int requestId = -1;

    /** Times it was sent again after a lost connection. */
    int retries;

    /** Its outcome was recorded (the future may be done earlier: cancelled by the caller). */
    boolean finished;

    /**
     * @param startNanos when it was made ({@link System#nanoTime()}), from which its timeout runs
     */
    PendingRequest(Kind kind, byte[] route, String routeText, byte[] payload, boolean idempotent, Duration timeout,
            long startNanos, RpmaRequestObserver.@Nullable Observed observed) {
        this.kind = kind;
        this.route = route;
        this.routeText = routeText;
        this.payload = payload;
        this.idempotent = idempotent;
        this.timeout = timeout;
        this.startNanos = startNanos;
        this.deadlineNanos = this.startNanos + timeout.toNanos();
        this.observed = observed;
    }

    /** On the loop of the connection it was given to ({@link #owner}): submits it there. */
    @Override
    public void run() {
        ClientConnection connection = this.owner;
        if (connection != null) {
            connection.submit(this);
        }
    }

    /** What it is, for messages. */
    String describe() {
        return switch (this.kind) {
            case REQUEST -> "the request to route \"" + this.routeText + "\"";
            case MESSAGE -> "the message to route \"" + this.routeText + "\"";
            case RAW_SEND -> "a raw message";
            case RAW_EXCHANGE -> "a raw exchange";
        };
    }
}
