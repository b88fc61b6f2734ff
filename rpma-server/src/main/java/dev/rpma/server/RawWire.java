package dev.rpma.server;

import java.nio.ByteBuffer;

/**
 * {@link RpmaWireMode#RAW}: a message is the bytes of one receive and a reply the bytes of one send,
 * with nothing around them, as librpma's example protocols have it. How many messages are in flight is
 * the application protocol's business; the server never sends more than its send slots allow.
 */
final class RawWire extends WireFormat {

    private final int maxPayload;

    RawWire(int maxPayload) {
        this.maxPayload = maxPayload;
    }

    @Override
    int headerSize() {
        return 0;
    }

    @Override
    int maxPayload() {
        return this.maxPayload;
    }

    @Override
    Kind read(ByteBuffer slot, int length) {
        slot.limit(length).position(0);
        return Kind.MESSAGE;
    }

    @Override
    int requestId() {
        return 0;
    }

    @Override
    int route() {
        return 0;
    }

    @Override
    boolean maySend() {
        return true;
    }

    @Override
    void writeHeader(ByteBuffer slot, int payloadLength, int reply, boolean failed) {
    }

    @Override
    void receiveReposted() {
    }

    @Override
    int controlFrame(ByteBuffer slot, boolean established) {
        return 0;
    }
}
