package dev.rpma.server;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * How one endpoint's messages map onto receives and sends: raw ({@link RawWire}) or the starter's
 * framing ({@link FramedWire}). An instance belongs to one session and is used on its event loop only.
 */
abstract class WireFormat {

    /** What an incoming message is, once {@link #read} looked at it. */
    enum Kind {
        /** Give it to the handler; a reply is expected ({@link #requestId()}). */
        REQUEST,
        /** Give it to the handler; no reply travels back. */
        MESSAGE,
        /** For the wire only (credits): nothing for the handler. */
        CONTROL
    }

    /** Bytes before a message's payload in its send slot. */
    abstract int headerSize();

    /** The largest payload of one message. */
    abstract int maxPayload();

    /**
     * Reads the message of {@code length} bytes in {@code slot} (a view at the slot's start, position
     * 0, limit the slot's size); leaves {@code slot}'s position and limit on the payload.
     *
     * @throws RpmaProtocolException when it is not a message of this format
     */
    abstract Kind read(ByteBuffer slot, int length);

    /** The request id of the last {@link Kind#REQUEST} read. */
    abstract int requestId();

    /** The route of the last message read: an index into the endpoint's routes, 0 in raw mode. */
    abstract int route();

    /**
     * The W3C traceparent the last message carried (framed mode, from a client that traces), or
     * {@code null}.
     */
    @Nullable String traceParent() {
        return null;
    }

    /** Whether a message (not a control frame) may be sent now, as far as the peer's receives go. */
    abstract boolean maySend();

    /**
     * Writes the header of an outgoing message into {@code slot} (a view at the slot's start) and
     * counts what it takes of the peer's receives.
     *
     * @param reply to a request: the request's id; {@code -1}: a one-way message
     * @param failed whether it answers a request whose handler failed (the payload says why)
     */
    abstract void writeHeader(ByteBuffer slot, int payloadLength, int reply, boolean failed);

    /** A receive of this side was posted again: the peer may be told. */
    abstract void receiveReposted();

    /**
     * A control frame to send now, or {@code null}: writes it into {@code slot} and returns its total
     * length, or returns 0 when none is due.
     */
    abstract int controlFrame(ByteBuffer slot, boolean established);

    /** What the peer said its largest message is, once known; for logs. */
    @Nullable Integer peerMaxPayload() {
        return null;
    }
}
