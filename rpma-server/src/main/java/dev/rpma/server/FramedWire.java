package dev.rpma.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@link RpmaWireMode#FRAMED} on the server's side: the header and the credits are
 * {@link RpmaFraming}'s; this adds what only a server does with them: a REQUEST or MESSAGE is routed
 * to a handler by its route, and a REPLY or ERROR from the client ends the session.
 *
 * <p>The payload comes before the route so that it starts at the same offset in every slot: a
 * handler gets a view of it from position 0, and none is made per message.
 */
final class FramedWire extends WireFormat {

    static final int HEADER_SIZE = RpmaFraming.HEADER_SIZE;

    static final int MAX_ROUTE_LENGTH = RpmaFraming.MAX_ROUTE_LENGTH;

    static final int HELLO = RpmaFraming.HELLO;

    static final int CREDIT = RpmaFraming.CREDIT;

    static final int REQUEST = RpmaFraming.REQUEST;

    static final int REPLY = RpmaFraming.REPLY;

    static final int ERROR = RpmaFraming.ERROR;

    static final int MESSAGE = RpmaFraming.MESSAGE;

    private final RpmaFraming framing;

    /** The routes of the endpoint's handlers, as UTF-8; a message's route is an index into it. */
    private final byte[][] routes;

    private int requestId;

    private int route;

    private @Nullable String traceParent;

    FramedWire(int maxPayload, int receiveSlots, List<String> routes) {
        this.framing = new RpmaFraming(maxPayload, receiveSlots, true);
        this.routes = routes.stream().map((route) -> route.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
    }

    /** A slot holds the header, the largest payload and the longest route. */
    static int slotSize(int maxPayload) {
        return RpmaFraming.slotSize(maxPayload);
    }

    @Override
    int headerSize() {
        return HEADER_SIZE;
    }

    @Override
    int maxPayload() {
        return this.framing.maxPayload();
    }

    @Override
    Kind read(ByteBuffer slot, int length) {
        int type = this.framing.read(slot, length);
        switch (type) {
            case HELLO, CREDIT -> {
                return Kind.CONTROL;
            }
            case REQUEST, MESSAGE -> {
                this.requestId = RpmaFraming.requestId(slot);
                if (type == REQUEST && this.requestId < 0) {
                    throw new RpmaProtocolException("a REQUEST with id " + Integer.toUnsignedString(this.requestId)
                            + ", above the largest, 2^31 - 1");
                }
                int payloadLength = RpmaFraming.payloadLength(slot);
                this.route = lookUp(slot, HEADER_SIZE + payloadLength, RpmaFraming.routeLength(slot));
                // a String only for a frame that carries a trace context: untraced frames allocate nothing
                this.traceParent = RpmaFraming.hasTraceContext(slot) ? RpmaFraming.traceParent(slot) : null;
                slot.limit(HEADER_SIZE + payloadLength).position(HEADER_SIZE);
                return (type == REQUEST) ? Kind.REQUEST : Kind.MESSAGE;
            }
            case REPLY, ERROR -> throw new RpmaProtocolException("a reply from the client; the server sends no requests");
            default -> throw new RpmaProtocolException("a frame of unknown type " + type);
        }
    }

    /** The index of the route at {@code offset}, or -1 when no handler has it; compares bytes, makes no String. */
    private int lookUp(ByteBuffer slot, int offset, int length) {
        for (int i = 0; i < this.routes.length; i++) {
            byte[] candidate = this.routes[i];
            if (candidate.length == length && matches(slot, offset, candidate)) {
                return i;
            }
        }
        return -1;
    }

    private static boolean matches(ByteBuffer slot, int offset, byte[] route) {
        for (int i = 0; i < route.length; i++) {
            if (slot.get(offset + i) != route[i]) {
                return false;
            }
        }
        return true;
    }

    /** The route of the last message, for a log line when it has no handler. */
    static String routeText(ByteBuffer frame, int length) {
        int routeLength = frame.get(3) & 0xFF;
        int end = length - (RpmaFraming.hasTraceContext(frame) ? RpmaFraming.TRACE_CONTEXT_LENGTH : 0);
        byte[] bytes = new byte[Math.min(routeLength, Math.max(0, end - HEADER_SIZE))];
        // the whole slot: reading the frame left its limit at the payload's end
        frame.duplicate().clear().get(end - bytes.length, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    int requestId() {
        return this.requestId;
    }

    @Override
    int route() {
        return this.route;
    }

    @Override
    @Nullable String traceParent() {
        return this.traceParent;
    }

    @Override
    boolean maySend() {
        return this.framing.maySend();
    }

    @Override
    void writeHeader(ByteBuffer slot, int payloadLength, int reply, boolean failed) {
        int type = (reply < 0) ? MESSAGE : failed ? ERROR : REPLY;
        this.framing.writeHeader(slot, type, payloadLength, (reply < 0) ? 0 : reply, 0);
    }

    @Override
    void receiveReposted() {
        this.framing.receiveReposted();
    }

    @Override
    int controlFrame(ByteBuffer slot, boolean established) {
        return this.framing.controlFrame(slot, established);
    }

    @Override
    @Nullable Integer peerMaxPayload() {
        return this.framing.peerMaxPayload();
    }

    int credits() {
        return this.framing.credits();
    }

    int grantable() {
        return this.framing.grantable();
    }
}
