package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * An accepted connection as the application sees it: from the connection handler's
 * {@link RpmaIncomingRequest#connect} to the end of the connection. The server owns the connection,
 * its buffers and its teardown; the session sends messages, carries the attributes the connection
 * handler set, and closes.
 *
 * <p>Thread-safe. A session lives on one event loop: called there (from a message handler or a
 * session listener) {@link #send} copies into registered memory and posts at once; called from any
 * other thread it copies the message and hands it to that loop.
 */
public interface RpmaSession {

    /** A number unique within the server. */
    long id();

    /** The name of the endpoint the session was accepted on. */
    String endpointName();

    /**
     * The attributes the connection handler set ({@link RpmaIncomingRequest#attributes()}); mutable,
     * shared by every thread that handles the session.
     */
    Map<String, Object> attributes();

    /** The private data of the client's connection request (a copy); over RoCE possibly zero-padded. */
    byte[] privateData();

    /** Where the session is in its life. */
    RpmaSessionState state();

    /**
     * Messages received on this session so far, bad ones included. Counted on the session's event
     * loop: read from another thread, it may be a moment behind.
     */
    long messagesReceived();

    /**
     * Messages this session posted to the client so far (replies and sends, not those still waiting
     * in its send queue). Counted on the session's event loop: read from another thread, it may be a
     * moment behind.
     */
    long messagesSent();

    /** Whether messages can be sent: the connection is established and not closing. */
    default boolean isOpen() {
        return state() == RpmaSessionState.ESTABLISHED;
    }

    /**
     * Sends the buffer's remaining bytes ({@code position} to {@code limit}) as one message, a
     * one-way message in framed mode. When every send slot is busy (or, framed, the client has no
     * receive posted), it waits in the session's send queue.
     *
     * @throws IllegalArgumentException when it is empty or larger than the endpoint's max-message-size
     * @throws IllegalStateException when the session is not open, or its endpoint has no message handlers
     */
    void send(ByteBuffer message);

    /** Sends {@code message} as one message; see {@link #send(ByteBuffer)}. */
    default void send(byte[] message) {
        send(ByteBuffer.wrap(message));
    }

    /**
     * A writable buffer of max-message-size bytes for a message built in place: on the session's loop,
     * when a send slot is free, it is that slot of registered memory, so that sending it (or returning
     * it from a message handler) copies nothing. Fill it, {@code flip()} it, and send or return it; one
     * left unsent goes back when the handler returns. Elsewhere it is a new heap buffer.
     */
    ByteBuffer newMessage();

    /**
     * Reads {@code length} bytes of the client's memory into one of the server's regions with
     * {@code rpma_read}, as the server of librpma's example 03-read-to-persistent does: from offset
     * {@code remoteOffset} of the client's region that {@code remoteDescriptor} describes (the
     * {@value dev.rpma.binding.RpmaMemoryRegion#DESCRIPTOR_SIZE}-byte {@code rpma_mr_get_descriptor} the
     * client sent, e.g. in its request's private data as {@link RpmaCommonData}) to offset
     * {@code regionOffset} of region {@code region}. The region must serve the session's endpoint and
     * declare {@code WRITE_DST} (which makes it a read destination too). No thread waits: the future
     * completes on the session's event loop when the read's completion comes, so what depends on it runs
     * there and must not block. The bytes are then in the region; making them durable is up to the
     * caller ({@link RpmaRegions#makeDurable}).
     *
     * <p>A session has at most {@link RpmaQueueSizes#MAX_READS_IN_FLIGHT} reads in flight, and no more
     * than its connection's send and completion queues have room for beside its message slots (10 with
     * librpma's default queues on an endpoint without message handlers); further reads wait on the loop,
     * in order. The future fails with {@link RpmaReadException}: when the read completes with an error
     * (the session then ends, since its queue pair is in the error state), or when the session ends
     * before it completed. Each distinct descriptor is made into a remote region once, kept until the
     * session ends (at most 16 per session). Any thread.
     *
     * @throws IllegalArgumentException when {@code length} is not positive, the region is unknown, does
     *     not serve the endpoint or declares no {@code WRITE_DST}, a range lies outside its region, or the
     *     descriptor is not one
     * @throws IllegalStateException when the session is not open, or its queues have no room for reads
     * @throws UnsupportedOperationException from a session that is no connection the server accepted (a
     *     codec's view of a client's request, a test double): the default
     */
    default CompletableFuture<Void> read(byte[] remoteDescriptor, long remoteOffset, String region, int regionOffset,
            int length) {
        throw new UnsupportedOperationException("Session " + id() + " is no connection the server accepted; only those"
                + " read their client's memory");
    }

    /**
     * Disconnects: messages not yet sent are dropped, the client sees {@code CLOSED}, and the session
     * ends with {@link RpmaSessionEnd.Reason#CLOSED_BY_SERVER}. Idempotent; any thread.
     */
    void close();
}
