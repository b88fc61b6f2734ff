package dev.rpma.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;

import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaSessionState;

/**
 * What an {@link RpmaMessageCodec} gets as its session when it encodes a client's request: the
 * codecs are the server's ({@link RpmaMessageCodec#encode} takes the session to build in its send
 * slot), and on the client a request is copied into a slot on the loop anyway, so a new heap buffer
 * of the largest payload is all it needs. Nothing is sent through it.
 */
final class EncodingSession implements dev.rpma.server.RpmaSession {

    private final String name;

    private final int maxMessageSize;

    EncodingSession(String name, int maxMessageSize) {
        this.name = name;
        this.maxMessageSize = maxMessageSize;
    }

    @Override
    public long id() {
        return 0;
    }

    @Override
    public String endpointName() {
        return this.name;
    }

    @Override
    public Map<String, Object> attributes() {
        return Map.of();
    }

    @Override
    public byte[] privateData() {
        return new byte[0];
    }

    @Override
    public RpmaSessionState state() {
        return RpmaSessionState.ESTABLISHED;
    }

    @Override
    public long messagesReceived() {
        return 0;
    }

    @Override
    public long messagesSent() {
        return 0;
    }

    @Override
    public void send(ByteBuffer message) {
        throw new UnsupportedOperationException("A codec encodes a client's request; it does not send");
    }

    @Override
    public ByteBuffer newMessage() {
        return ByteBuffer.allocate(this.maxMessageSize).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public void close() {
        throw new UnsupportedOperationException("A codec encodes a client's request; it does not close");
    }
}
