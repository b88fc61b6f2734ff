package dev.rpma.server;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * Handles the messages of an endpoint's sessions (of one route, in framed mode).
 *
 * <p>{@code message} is a read-only view of the registered receive slot, from position 0 to the
 * message's length, valid only during the call: copy what must outlive it. The return value is the
 * reply, sent on the same session: {@code null} for none (in framed mode an empty reply answers a
 * request), a {@link ByteBuffer} (its remaining bytes; see {@link RpmaSession#newMessage()}) or a
 * {@code byte[]}. Throwing {@link RpmaProtocolException} ends the session as out of protocol; any
 * other exception is logged and counted, and in framed mode answers a request with an error reply;
 * either way the receive slot is posted again.
 *
 * <p>A message is the client's bytes: log them only through {@link RpmaEscaping#escape(ByteBuffer, int)}.
 * The server logs failures escaped (an exception's message may quote the message) and at most once a
 * second per endpoint and kind, with the stack trace the first time.
 */
@FunctionalInterface
public interface RpmaMessageListener {

    @Nullable Object onMessage(ByteBuffer message, RpmaSession session) throws Exception;

    /** A name for logs and metrics (the annotated method). */
    default String name() {
        return toString();
    }
}
