package dev.rpma.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@link RpmaWireMode#FRAMED}, the starter's framing (docs/wire-protocol.md has it byte by byte): a
 * 16-byte little-endian header, then the payload, then the route.
 *
 * <pre>
 * offset size
 *  0     1    magic 'R' (0x52)
 *  1     1    version 1
 *  2     1    type: 1 HELLO, 2 CREDIT, 3 REQUEST, 4 REPLY, 5 ERROR, 6 MESSAGE
 *  3     1    route length R (0 to 64)
 *  4     2    credits: receives the sender posted again since its last frame
 *  6     2    0
 *  8     4    request id, 0 to 2^31 - 1 (REQUEST, and the REPLY or ERROR that answers it)
 * 12     4    payload length N
 * 16     N    payload (HELLO: u32, the largest payload the sender takes)
 * 16+N   R    route, UTF-8
 * </pre>
 *
 * <p>The payload comes before the route so that it starts at the same offset in every slot: a
 * handler gets a view of it from position 0, and none is made per message.
 *
 * <p>Credits, so that no side ever sends a frame the other has no receive posted for: each side
 * posts all its receives before connecting and may assume one credit of the other's; its first frame
 * is a HELLO granting the rest. Every frame carries the receives its sender posted again since its
 * previous frame. A message (REQUEST, REPLY, ERROR, MESSAGE) needs two credits, so that one is always
 * left for a CREDIT frame; a CREDIT frame goes out when at least two receives can be granted and
 * either half of them wait or the other side is down to its last credit. Every standalone CREDIT
 * frame grants at least two receives and takes one, so credit frames cannot answer each other for
 * ever; and a side that cannot send for want of credits always gets a CREDIT frame.
 */
final class FramedWire extends WireFormat {

    static final int HEADER_SIZE = 16;

    static final int MAX_ROUTE_LENGTH = 64;

    static final byte MAGIC = 0x52;

    static final byte VERSION = 1;

    static final int HELLO = 1;

    static final int CREDIT = 2;

    static final int REQUEST = 3;

    static final int REPLY = 4;

    static final int ERROR = 5;

    static final int MESSAGE = 6;

    private final int maxPayload;

    private final int receiveSlots;

    /** The routes of the endpoint's handlers, as UTF-8; a message's route is an index into it. */
    private final byte[][] routes;

    /** Frames this side may send now: the other side's receives it knows of. */
    private int credits = 1;

    /** Receives of this side posted again and not yet announced. */
    private int grantable;

    /** What this side knows of the other side's credits: what it granted minus the frames it received. */
    private int peerCredits = 1;

    private boolean helloSent;

    private @Nullable Integer peerMaxPayload;

    private int requestId;

    private int route;

    FramedWire(int maxPayload, int receiveSlots, List<String> routes) {
        this.maxPayload = maxPayload;
        this.receiveSlots = receiveSlots;
        this.routes = routes.stream().map((route) -> route.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
        // every receive is posted before the connect; the other side assumes one of them
        this.grantable = receiveSlots - 1;
    }

    /** A slot holds the header, the largest payload and the longest route. */
    static int slotSize(int maxPayload) {
        return HEADER_SIZE + maxPayload + MAX_ROUTE_LENGTH;
    }

    @Override
    int headerSize() {
        return HEADER_SIZE;
    }

    @Override
    int maxPayload() {
        return this.maxPayload;
    }

    @Override
    Kind read(ByteBuffer slot, int length) {
        if (length < HEADER_SIZE) {
            throw new RpmaProtocolException("a frame of " + length + " bytes, shorter than the 16-byte header");
        }
        if (slot.get(0) != MAGIC || slot.get(1) != VERSION) {
            throw new RpmaProtocolException("no frame header: magic 0x" + Integer.toHexString(slot.get(0) & 0xFF)
                    + ", version " + (slot.get(1) & 0xFF) + " (a framed endpoint takes magic 0x52, version 1)");
        }
        int type = slot.get(2);
        int routeLength = slot.get(3) & 0xFF;
        int granted = slot.getShort(4) & 0xFFFF;
        int payloadLength = slot.getInt(12);
        if (routeLength > MAX_ROUTE_LENGTH || payloadLength < 0 || payloadLength > this.maxPayload
                || HEADER_SIZE + (long) payloadLength + routeLength != length) {
            throw new RpmaProtocolException("a frame of " + length + " bytes whose header says payload " + payloadLength
                    + " and route " + routeLength + " (at most " + this.maxPayload + " and " + MAX_ROUTE_LENGTH + ")");
        }
        // the frame took one of this side's receives; it grants some of the other side's
        this.peerCredits--;
        this.credits += granted;
        switch (type) {
            case HELLO -> {
                if (payloadLength != Integer.BYTES) {
                    throw new RpmaProtocolException("a HELLO frame with " + payloadLength + " bytes, not 4");
                }
                this.peerMaxPayload = slot.getInt(HEADER_SIZE);
                return Kind.CONTROL;
            }
            case CREDIT -> {
                return Kind.CONTROL;
            }
            case REQUEST, MESSAGE -> {
                this.requestId = slot.getInt(8);
                if (type == REQUEST && this.requestId < 0) {
                    throw new RpmaProtocolException("a REQUEST with id " + Integer.toUnsignedString(this.requestId)
                            + ", above the largest, 2^31 - 1");
                }
                this.route = lookUp(slot, HEADER_SIZE + payloadLength, routeLength);
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
        byte[] bytes = new byte[Math.min(routeLength, Math.max(0, length - HEADER_SIZE))];
        // the whole slot: reading the frame left its limit at the payload's end
        frame.duplicate().clear().get(length - bytes.length, bytes);
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
    boolean maySend() {
        return this.helloSent && this.credits >= 2;
    }

    @Override
    void writeHeader(ByteBuffer slot, int payloadLength, int reply, boolean failed) {
        int type = (reply < 0) ? MESSAGE : failed ? ERROR : REPLY;
        write(slot, type, payloadLength, (reply < 0) ? 0 : reply);
    }

    private void write(ByteBuffer slot, int type, int payloadLength, int requestId) {
        int granted = Math.min(this.grantable, 0xFFFF);
        slot.put(0, MAGIC).put(1, VERSION).put(2, (byte) type).put(3, (byte) 0);
        slot.putShort(4, (short) granted).putShort(6, (short) 0);
        slot.putInt(8, requestId).putInt(12, payloadLength);
        this.grantable -= granted;
        this.peerCredits += granted;
        this.credits--;
    }

    @Override
    void receiveReposted() {
        this.grantable++;
    }

    @Override
    int controlFrame(ByteBuffer slot, boolean established) {
        if (!this.helloSent) {
            if (!established || this.credits < 1) {
                return 0;
            }
            this.helloSent = true;
            slot.putInt(HEADER_SIZE, this.maxPayload);
            write(slot, HELLO, Integer.BYTES, 0);
            return HEADER_SIZE + Integer.BYTES;
        }
        boolean due = this.grantable >= 2 && (this.grantable >= Math.max(2, this.receiveSlots / 2) || this.peerCredits <= 1);
        if (!due || this.credits < 1) {
            return 0;
        }
        write(slot, CREDIT, 0, 0);
        return HEADER_SIZE;
    }

    @Override
    @Nullable Integer peerMaxPayload() {
        return this.peerMaxPayload;
    }

    int credits() {
        return this.credits;
    }

    int grantable() {
        return this.grantable;
    }
}
