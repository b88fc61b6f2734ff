package dev.rpma.server;

import java.nio.ByteBuffer;

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
 *  6     2    0
 *  8     4    request id, 0 to 2^31 - 1 (REQUEST, and the REPLY or ERROR that answers it)
 * 12     4    payload length N
 * 16     N    payload (HELLO: u32, the largest payload the sender takes)
 * 16+N   R    route, UTF-8
 * </pre>
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

    /** The largest request id: ids are 31 bits. */
    public static final int MAX_REQUEST_ID = Integer.MAX_VALUE;

    private final int maxPayload;

    private final int receiveSlots;

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
     */
    public RpmaFraming(int maxPayload, int receiveSlots) {
        this.maxPayload = maxPayload;
        this.receiveSlots = receiveSlots;
        // every receive is posted before the connect; the other side assumes one of them
        this.grantable = receiveSlots - 1;
    }

    /** A slot holds the header, the largest payload and the longest route. */
    public static int slotSize(int maxPayload) {
        return HEADER_SIZE + maxPayload + MAX_ROUTE_LENGTH;
    }

    /**
     * Checks the header of the frame of {@code length} bytes at the start of {@code slot} (little-endian)
     * and counts the credits it grants and the receive it took; returns its type.
     *
     * @throws RpmaProtocolException when it is no frame, its lengths do not add up, or a HELLO is not 4 bytes
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
        if (routeLength > MAX_ROUTE_LENGTH || payloadLength < 0 || payloadLength > this.maxPayload
                || HEADER_SIZE + (long) payloadLength + routeLength != length) {
            throw new RpmaProtocolException("a frame of " + length + " bytes whose header says payload " + payloadLength
                    + " and route " + routeLength + " (at most " + this.maxPayload + " and " + MAX_ROUTE_LENGTH + ")");
        }
        // the frame took one of this side's receives; it grants some of the other side's
        this.peerCredits--;
        this.credits += granted;
        if (type == HELLO) {
            if (payloadLength != Integer.BYTES) {
                throw new RpmaProtocolException("a HELLO frame with " + payloadLength + " bytes, not 4");
            }
            this.peerMaxPayload = slot.getInt(HEADER_SIZE);
        }
        return type;
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
        int granted = Math.min(this.grantable, 0xFFFF);
        slot.put(0, MAGIC).put(1, VERSION).put(2, (byte) type).put(3, (byte) routeLength);
        slot.putShort(4, (short) granted).putShort(6, (short) 0);
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

    /** Frames this side may send now. */
    public int credits() {
        return this.credits;
    }

    /** Receives reposted and not yet granted. */
    public int grantable() {
        return this.grantable;
    }
}
