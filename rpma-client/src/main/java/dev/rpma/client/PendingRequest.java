package dev.rpma.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * One request, message or exchange of an {@link RpmaClient}, from the call to its completion. It is
 * itself the future the caller gets and the task that hands it to its connection's loop
 * ({@link #run}, through the loop's task queue, which publishes it), so that a request is one object;
 * made on that loop (in a callback), it is submitted there in the call
 * ({@link ClientConnection#takeOnLoop}). From then on it is read and written only on the loop of the
 * connection that holds it, and moved to another connection only by that loop.
 */
final class PendingRequest extends CompletableFuture<byte[]> implements Runnable {

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

    /**
     * What it sends: the caller's array while the call that made it runs (a request posted in the call
     * is copied into its send slot there, {@link ClientConnection#takeOnLoop}); a copy
     * ({@link #ownPayload}) before the call returns when it waits, goes to another thread, or may be
     * sent again (idempotent), since the caller may reuse the array then.
     */
    byte[] payload;

    final boolean idempotent;

    final Duration timeout;

    final long startNanos;

    final long deadlineNanos;

    /** Its observation ({@link RpmaRequestObserver}), or {@code null}. */
    final RpmaRequestObserver.@Nullable Observed observed;

    /** The connection it is counted on ({@link ClientConnection#load}), {@code null} while on none. */
    @Nullable ClientConnection owner;

    /** Counted as handed over to {@link #owner}'s loop and not yet taken there. */
    boolean handedOver;

    /** The id of its REQUEST on its current connection, -1 before it was sent. */
    int requestId = -1;

    /** Its frame was posted (copied into a send slot) at least once. */
    boolean posted;

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

    /** On the loop of the connection it was handed to ({@link #owner}): submits it there. */
    @Override
    public void run() {
        ClientConnection connection = this.owner;
        if (connection != null) {
            connection.take(this);
        }
    }

    /** Takes a copy of what it sends: the caller may reuse its array once the call returns. */
    void ownPayload() {
        this.payload = this.payload.clone();
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
