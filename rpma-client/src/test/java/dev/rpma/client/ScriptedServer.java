package dev.rpma.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.server.RpmaFraming;

/**
 * The server side of one fake connection, played by a test in the starter's framing: its HELLO, the
 * client's frames as the server receives them, and replies. Every frame of the server grants one
 * receive back (the one the client's last frame took), as a server reposting after each frame does.
 */
final class ScriptedServer {

    static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * A client of the tests' shape over {@code fake}: named "orders", 4 receive and 4 send slots of 64
     * bytes, a back-off of milliseconds; the test adds where it connects and what observes it.
     */
    static RpmaClientBuilder clientOf(dev.rpma.binding.testing.FakeLibRpma fake) {
        return RpmaClient.builder(dev.rpma.binding.Rpma.using(fake)).name("orders").receiveSlots(4).sendSlots(4)
            .maxMessageSize(64).backoff(Duration.ofMillis(1), 2.0, Duration.ofMillis(4));
    }

    private final FakeConnection connection;

    ScriptedServer(FakeConnection connection) {
        this.connection = connection;
    }

    FakeConnection connection() {
        return this.connection;
    }

    /** The server's HELLO: it has 8 receives, one of which the client assumed; it takes no trace context. */
    ScriptedServer hello() {
        this.connection.deliver(frame(RpmaFraming.HELLO, 7, 0,
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(64).array(), ""));
        return this;
    }

    /** {@link #hello()}, saying that the server takes a trace context. */
    ScriptedServer tracingHello() {
        byte[] hello = frame(RpmaFraming.HELLO, 7, 0,
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(64).array(), "");
        hello[6] = RpmaFraming.TRACE_CONTEXT;
        this.connection.deliver(hello);
        return this;
    }

    void reply(int requestId, byte[] payload) {
        this.connection.deliver(frame(RpmaFraming.REPLY, 1, requestId, payload, ""));
    }

    void error(int requestId, String text) {
        this.connection.deliver(frame(RpmaFraming.ERROR, 1, requestId, text.getBytes(StandardCharsets.UTF_8), ""));
    }

    /** The client's REQUEST frames received so far, in order. */
    List<Frame> requests() {
        return this.connection.sent().stream().map(Frame::of).filter((frame) -> frame.type() == RpmaFraming.REQUEST)
            .toList();
    }

    /** Waits for the client's {@code count}th REQUEST and returns them all. */
    List<Frame> awaitRequests(int count) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (requests().size() < count) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("The client sent " + requests().size() + " requests, not " + count);
            }
            try {
                Thread.sleep(1);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new AssertionError(ex);
            }
        }
        return requests();
    }

    static byte[] frame(int type, int credits, int requestId, byte[] payload, String route) {
        byte[] routeBytes = route.getBytes(StandardCharsets.UTF_8);
        ByteBuffer frame = ByteBuffer.allocate(RpmaFraming.HEADER_SIZE + payload.length + routeBytes.length)
            .order(ByteOrder.LITTLE_ENDIAN);
        frame.put(RpmaFraming.MAGIC).put(RpmaFraming.VERSION).put((byte) type).put((byte) routeBytes.length);
        frame.putShort((short) credits).putShort((short) 0).putInt(requestId).putInt(payload.length);
        frame.put(payload).put(routeBytes);
        return frame.array();
    }

    /**
     * One frame as the server received it.
     *
     * @param flags the header's byte 6
     * @param traceParent what follows the route: the trace context, {@code null} when the frame ends there
     */
    record Frame(int type, int credits, int flags, int requestId, byte[] payload, String route, String traceParent) {

        static Frame of(byte[] bytes) {
            ByteBuffer frame = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            int routeLength = frame.get(3) & 0xFF;
            int payloadLength = frame.getInt(12);
            byte[] payload = new byte[payloadLength];
            frame.get(RpmaFraming.HEADER_SIZE, payload);
            byte[] route = new byte[routeLength];
            frame.get(RpmaFraming.HEADER_SIZE + payloadLength, route);
            int end = RpmaFraming.HEADER_SIZE + payloadLength + routeLength;
            String traceParent = (bytes.length > end)
                    ? new String(bytes, end, bytes.length - end, StandardCharsets.US_ASCII) : null;
            return new Frame(frame.get(2), frame.getShort(4) & 0xFFFF, frame.get(6), frame.getInt(8), payload,
                    new String(route, StandardCharsets.UTF_8), traceParent);
        }
    }
}
