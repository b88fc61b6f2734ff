package dev.rpma.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * The starter's framing ({@link RpmaWireMode#FRAMED}, docs/wire-protocol.md has it byte by byte) as
 * one side of one connection sees it: the header's layout, and the credits that keep each side from
 * sending a frame the other has no receive posted for. The server's sessions ({@link FramedWire}) and
 * the client ({@code dev.rpma.client}) both count with it, so the two sides cannot drift apart.
 *
 * <pre>
 * offset size
 *  0     1    magic 'R' (0x52)
 *  1     1    version 1
 *  2     1    type: 1 HELLO, 2 CREDIT, 3 REQUEST, 4 REPLY, 5 ERROR, 6 MESSAGE
 *  3     1    route length R (0 to 64)
 *  4     2    credits: receives the sender posted again since its last frame
 *  6     1    flags: bit 0 {@link #TRACE_CONTEXT}; the other bits 0
 *  7     1    0
 *  8     4    request id, 0 to 2^31 - 1 (REQUEST, and the REPLY or ERROR that answers it)
 * 12     4    payload length N
 * 16     N    payload (HELLO: u32, the largest payload the sender takes)
 * 16+N   R    route, UTF-8
 * 16+N+R 55   REQUEST and MESSAGE with TRACE_CONTEXT: the W3C traceparent, ASCII
 * </pre>
 *
 * <p>Trace context: a side that takes it sets {@link #TRACE_CONTEXT} in its HELLO (the server); the
 * other side (the client) may then send it in a REQUEST or MESSAGE, after the route. A side that does
 * not know the flag leaves it 0 in its HELLO and ignores it in the other's, so neither an older client
 * nor an older server ever meets the field.
 *
 * <p>Credits: each side posts all its receives before connecting and may assume one credit of the
 * other's; its first frame is a HELLO granting the rest. Every frame carries the receives its sender
 * posted again since its previous frame. A message (REQUEST, REPLY, ERROR, MESSAGE) needs two credits,
 * so that one is always left for a CREDIT frame; a CREDIT frame goes out when at least two receives
 * can be granted and either half of them wait or the other side is down to its last credit. Every
 * standalone CREDIT frame grants at least two receives and takes one, so credit frames cannot answer
 * each other for ever; and a side that cannot send for want of credits always gets a CREDIT frame.
 *
 * <p>An instance belongs to one connection and is used on its event loop only.
 */
public final class RpmaFraming {

    public static final int HEADER_SIZE = 16;

    public static final int MAX_ROUTE_LENGTH = 64;

    public static final byte MAGIC = 0x52;

    public static final byte VERSION = 1;

    public static final int HELLO = 1;

    public static final int CREDIT = 2;

    public static final int REQUEST = 3;

    public static final int REPLY = 4;

    public static final int ERROR = 5;

    public static final int MESSAGE = 6;

    /**
     * Flag bit of the header's byte 6. In a HELLO: its sender takes a trace context in the REQUEST and
     * MESSAGE frames it receives. In a REQUEST or MESSAGE: a trace context follows the route.
     */
    public static final int TRACE_CONTEXT = 0x01;

    /** Bytes of the trace context: a W3C traceparent, {@code 00-<32 hex>-<16 hex>-<2 hex>}, in ASCII. */
    public static final int TRACE_CONTEXT_LENGTH = 55;

    /** The largest request id: ids are 31 bits. */
    public static final int MAX_REQUEST_ID = Integer.MAX_VALUE;

    private final int maxPayload;

    private final int receiveSlots;

    /** Whether this side takes a trace context in REQUEST and MESSAGE frames (says so in its HELLO). */
    private final boolean takesTraceContext;

    /** Whether the other side's HELLO said it takes a trace context. */
    private boolean peerTakesTraceContext;

    /** Frames this side may send now: the other side's receives it knows of. */
    private int credits = 1;

    /** Receives of this side posted again and not yet announced. */
    private int grantable;

    /** What this side knows of the other side's credits: what it granted minus the frames it received. */
    private int peerCredits = 1;

    private boolean helloSent;

    private @Nullable Integer peerMaxPayload;

    /**
     * @param maxPayload the largest payload this side takes (said in its HELLO)
     * @param receiveSlots this side's receives, all posted before the connection
     * @param takesTraceContext whether this side takes a trace context in the frames it receives (said in
     *     its HELLO): the server's side does, the client's does not
     */
    public RpmaFraming(int maxPayload, int receiveSlots, boolean takesTraceContext) {
        this.maxPayload = maxPayload;
        this.receiveSlots = receiveSlots;
        this.takesTraceContext = takesTraceContext;
        // every receive is posted before the connect; the other side assumes one of them
        this.grantable = receiveSlots - 1;
    }

    /** A slot holds the header, the largest payload, the longest route and a trace context. */
    public static int slotSize(int maxPayload) {
        return HEADER_SIZE + maxPayload + MAX_ROUTE_LENGTH + TRACE_CONTEXT_LENGTH;
    }

    /**
     * Checks the header of the frame of {@code length} bytes at the start of {@code slot} (little-endian)
     * and counts the credits it grants and the receive it took; returns its type.
     *
     * @throws RpmaProtocolException when it is no frame, its lengths do not add up, a HELLO is not 4 bytes,
     *     or it carries a trace context this side did not offer to take
     */
    public int read(ByteBuffer slot, int length) {
        if (length < HEADER_SIZE) {
            throw new RpmaProtocolException("a frame of " + length + " bytes, shorter than the 16-byte header");
        }
        if (slot.get(0) != MAGIC || slot.get(1) != VERSION) {
            throw new RpmaProtocolException("no frame header: magic 0x" + Integer.toHexString(slot.get(0) & 0xFF)
                    + ", version " + (slot.get(1) & 0xFF) + " (a framed endpoint takes magic 0x52, version 1)");
        }
        int type = slot.get(2);
        int routeLength = routeLength(slot);
        int granted = slot.getShort(4) & 0xFFFF;
        int payloadLength = payloadLength(slot);
        boolean traced = hasTraceContext(slot);
        if (traced && !this.takesTraceContext) {
            throw new RpmaProtocolException("a frame with a trace context, which this side did not offer to take");
        }
        int traceLength = traced ? TRACE_CONTEXT_LENGTH : 0;
        if (routeLength > MAX_ROUTE_LENGTH || payloadLength < 0 || payloadLength > this.maxPayload
                || HEADER_SIZE + (long) payloadLength + routeLength + traceLength != length) {
            throw new RpmaProtocolException("a frame of " + length + " bytes whose header says payload " + payloadLength
                    + ", route " + routeLength + " and trace context " + traceLength + " (at most " + this.maxPayload
                    + ", " + MAX_ROUTE_LENGTH + " and " + TRACE_CONTEXT_LENGTH + ")");
        }
        // the frame took one of this side's receives; it grants some of the other side's
        this.peerCredits--;
        this.credits += granted;
        if (type == HELLO) {
            if (payloadLength != Integer.BYTES) {
                throw new RpmaProtocolException("a HELLO frame with " + payloadLength + " bytes, not 4");
            }
            this.peerMaxPayload = slot.getInt(HEADER_SIZE);
            this.peerTakesTraceContext = (slot.get(6) & TRACE_CONTEXT) != 0;
        }
        return type;
    }

    /** Whether the frame in {@code slot}, a REQUEST or MESSAGE, carries a trace context after its route. */
    public static boolean hasTraceContext(ByteBuffer slot) {
        int type = slot.get(2);
        return (type == REQUEST || type == MESSAGE) && (slot.get(6) & TRACE_CONTEXT) != 0;
    }

    /**
     * The trace context of the frame in {@code slot} (read with {@link #read}), or {@code null} when it
     * carries none or what it carries is not a W3C traceparent of version 00: the peer's bytes are
     * checked before they become a String, and a bad one is dropped rather than propagated.
     */
    public static @Nullable String traceParent(ByteBuffer slot) {
        if (!hasTraceContext(slot)) {
            return null;
        }
        int offset = HEADER_SIZE + payloadLength(slot) + routeLength(slot);
        byte[] text = new byte[TRACE_CONTEXT_LENGTH];
        for (int i = 0; i < TRACE_CONTEXT_LENGTH; i++) {
            text[i] = slot.get(offset + i);
        }
        return isTraceParent(text) ? new String(text, StandardCharsets.US_ASCII) : null;
    }

    /** Whether {@code text} is {@code 00-<32 hex>-<16 hex>-<2 hex>}, lower case, as W3C Trace Context writes it. */
    public static boolean isTraceParent(byte[] text) {
        if (text.length != TRACE_CONTEXT_LENGTH || text[0] != '0' || text[1] != '0') {
            return false;
        }
        for (int i = 2; i < TRACE_CONTEXT_LENGTH; i++) {
            boolean dash = i == 2 || i == 35 || i == 52;
            byte b = text[i];
            if (dash ? b != '-' : !((b >= '0' && b <= '9') || (b >= 'a' && b <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    /** The request id field of the frame in {@code slot}. */
    public static int requestId(ByteBuffer slot) {
        return slot.getInt(8);
    }

    /** The payload length field of the frame in {@code slot}. */
    public static int payloadLength(ByteBuffer slot) {
        return slot.getInt(12);
    }

    /** The route length field of the frame in {@code slot}. */
    public static int routeLength(ByteBuffer slot) {
        return slot.get(3) & 0xFF;
    }

    /** Whether a message (not a control frame) may be sent now, as far as the other side's receives go. */
    public boolean maySend() {
        return this.helloSent && this.credits >= 2;
    }

    /**
     * Writes a header into {@code slot} (at its start, little-endian) granting the receives reposted
     * since the last frame, and counts the credit it takes. The payload (and route) are the caller's.
     */
    public void writeHeader(ByteBuffer slot, int type, int payloadLength, int requestId, int routeLength) {
        writeHeader(slot, type, payloadLength, requestId, routeLength, false);
    }

    /**
     * {@link #writeHeader(ByteBuffer, int, int, int, int)}, saying whether a trace context follows the
     * route (a REQUEST or MESSAGE, to a side that takes it: {@link #peerTakesTraceContext()}); the
     * caller writes the trace context.
     */
    public void writeHeader(ByteBuffer slot, int type, int payloadLength, int requestId, int routeLength,
            boolean traceContext) {
        int granted = Math.min(this.grantable, 0xFFFF);
        slot.put(0, MAGIC).put(1, VERSION).put(2, (byte) type).put(3, (byte) routeLength);
        int flags = (traceContext || (type == HELLO && this.takesTraceContext)) ? TRACE_CONTEXT : 0;
        slot.putShort(4, (short) granted).put(6, (byte) flags).put(7, (byte) 0);
        slot.putInt(8, requestId).putInt(12, payloadLength);
        this.grantable -= granted;
        this.peerCredits += granted;
        this.credits--;
    }

    /** A receive of this side was posted again: the other side may be told. */
    public void receiveReposted() {
        this.grantable++;
    }

    /**
     * The control frame due now (the HELLO once established, then CREDIT frames): writes it into
     * {@code slot} and returns its length, or returns 0 when none is due.
     */
    public int controlFrame(ByteBuffer slot, boolean established) {
        if (!this.helloSent) {
            if (!established || this.credits < 1) {
                return 0;
            }
            this.helloSent = true;
            slot.putInt(HEADER_SIZE, this.maxPayload);
            writeHeader(slot, HELLO, Integer.BYTES, 0, 0);
            return HEADER_SIZE + Integer.BYTES;
        }
        boolean due = this.grantable >= 2 && (this.grantable >= Math.max(2, this.receiveSlots / 2) || this.peerCredits <= 1);
        if (!due || this.credits < 1) {
            return 0;
        }
        writeHeader(slot, CREDIT, 0, 0, 0);
        return HEADER_SIZE;
    }

    /** The largest payload this side takes. */
    public int maxPayload() {
        return this.maxPayload;
    }

    /** What the other side said its largest payload is, once its HELLO came. */
    public @Nullable Integer peerMaxPayload() {
        return this.peerMaxPayload;
    }

    /** Whether the other side's HELLO said it takes a trace context: only then may a frame carry one. */
    public boolean peerTakesTraceContext() {
        return this.peerTakesTraceContext;
    }

    /** Frames this side may send now. */
    public int credits() {
        return this.credits;
    }

    /** Receives reposted and not yet granted. */
    public int grantable() {
        return this.grantable;
    }
}
