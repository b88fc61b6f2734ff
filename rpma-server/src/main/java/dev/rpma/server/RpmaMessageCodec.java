package dev.rpma.server;

import java.nio.ByteBuffer;

/**
 * Turns a message's payload into an object a message handler takes, and a handler's return value
 * into the payload of its reply. Codecs are asked in order; the first that can, does.
 */
public interface RpmaMessageCodec {

    /** Whether {@link #decode} makes objects of {@code type}. */
    boolean canDecode(Class<?> type);

    /**
     * The payload as an object of {@code type}. {@code payload} is a view of the receive slot from
     * position 0, valid only during the call.
     *
     * @throws RpmaProtocolException when the payload is not a {@code type} (its session then ends)
     */
    Object decode(ByteBuffer payload, Class<?> type);

    /** Whether {@link #encode} takes objects of {@code type}. */
    boolean canEncode(Class<?> type);

    /**
     * The payload for {@code value}, from its position to its limit; build it in
     * {@link RpmaSession#newMessage()} to send it without a copy.
     */
    ByteBuffer encode(Object value, RpmaSession session);
}
