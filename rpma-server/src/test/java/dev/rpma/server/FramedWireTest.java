package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * The starter's framing, byte by byte, and its credits: two sides exchange frames over a simulated
 * wire that holds each side to its posted receives, under random traffic and random processing
 * delays, and every run must never send a frame the other side has no receive for, must deliver every
 * message once traffic stops (no deadlock), and must not answer credit frames with credit frames for
 * ever.
 */
class FramedWireTest {

    private static final int SLOT = FramedWire.slotSize(64);

    @Test
    void aFrameIsItsHeaderThenThePayloadThenTheRoute() {
        FramedWire server = new FramedWire(64, 4, List.of("echo", "orders.create"));
        ByteBuffer frame = frame(FramedWire.REQUEST, 5, 77, new byte[] { 1, 2, 3 }, "orders.create");
        assertThat(server.read(frame, frame.limit())).isEqualTo(WireFormat.Kind.REQUEST);
        assertThat(server.requestId()).isEqualTo(77);
        assertThat(server.route()).isEqualTo(1);
        assertThat(frame.position()).isEqualTo(16);
        assertThat(frame.remaining()).isEqualTo(3);
        assertThat(server.credits()).as("1 assumed + 5 granted").isEqualTo(6);

        ByteBuffer reply = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
        server.receiveReposted();
        int grantable = server.grantable();
        server.writeHeader(reply, 2, 77, false);
        assertThat(reply.get(0)).isEqualTo((byte) 'R');
        assertThat(reply.get(1)).isEqualTo((byte) 1);
        assertThat(reply.get(2)).isEqualTo((byte) FramedWire.REPLY);
        assertThat(reply.getShort(4)).as("the reposted receives granted").isEqualTo((short) grantable);
        assertThat(reply.getInt(8)).isEqualTo(77);
        assertThat(reply.getInt(12)).isEqualTo(2);
        assertThat(server.grantable()).isZero();
    }

    @Test
    void aMessageToARouteWithoutAHandlerIsReadAsRouteMinusOne() {
        FramedWire server = new FramedWire(64, 4, List.of("echo"));
        ByteBuffer frame = frame(FramedWire.MESSAGE, 0, 0, new byte[] { 5 }, "nope");
        int length = frame.limit();
        assertThat(server.read(frame, length)).isEqualTo(WireFormat.Kind.MESSAGE);
        assertThat(server.route()).isEqualTo(-1);
        assertThat(FramedWire.routeText(frame, length)).isEqualTo("nope");
    }

    @Test
    void framesThatAreNotOfTheProtocolAreRefused() {
        FramedWire server = new FramedWire(64, 4, List.of(""));
        assertThatThrownBy(() -> server.read(ByteBuffer.allocate(SLOT), 8)).isInstanceOf(RpmaProtocolException.class)
            .hasMessageContaining("shorter than the 16-byte header");
        ByteBuffer garbage = ByteBuffer.allocate(SLOT);
        garbage.put(0, (byte) 'X');
        assertThatThrownBy(() -> server.read(garbage, 20)).hasMessageContaining("no frame header");
        ByteBuffer lying = frame(FramedWire.REQUEST, 0, 1, new byte[4], "");
        assertThatThrownBy(() -> server.read(lying, lying.limit() + 1)).hasMessageContaining("whose header says");
        ByteBuffer unknown = frame(9, 0, 1, new byte[0], "");
        assertThatThrownBy(() -> server.read(unknown, unknown.limit())).hasMessageContaining("unknown type 9");
        ByteBuffer reply = frame(FramedWire.REPLY, 0, 1, new byte[0], "");
        assertThatThrownBy(() -> server.read(reply, reply.limit())).hasMessageContaining("the server sends no requests");
        ByteBuffer hello = frame(FramedWire.HELLO, 0, 0, new byte[3], "");
        assertThatThrownBy(() -> server.read(hello, hello.limit())).hasMessageContaining("HELLO frame with 3 bytes");
    }

    @Test
    void aTraceContextFollowsTheRouteWhenTheFlagSaysSoAndIsReadAsTheTraceParent() {
        FramedWire server = new FramedWire(64, 4, List.of("orders.create"));
        String traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        ByteBuffer frame = traced(frame(FramedWire.REQUEST, 0, 9, new byte[] { 1, 2 }, "orders.create"), traceParent);
        assertThat(frame.limit()).isEqualTo(16 + 2 + 13 + 55);
        assertThat(server.read(frame, frame.limit())).isEqualTo(WireFormat.Kind.REQUEST);
        assertThat(server.route()).isZero();
        assertThat(server.traceParent()).isEqualTo(traceParent);
        assertThat(frame.position()).as("the payload still starts at 16").isEqualTo(16);
        assertThat(frame.remaining()).isEqualTo(2);
        assertThat(FramedWire.routeText(frame, 16 + 2 + 13 + 55)).isEqualTo("orders.create");

        ByteBuffer plain = frame(FramedWire.MESSAGE, 0, 0, new byte[] { 3 }, "orders.create");
        server.read(plain, plain.limit());
        assertThat(server.traceParent()).as("the last frame carried none").isNull();
    }

    @Test
    void aTraceContextThatIsNoTraceParentIsDroppedAndALengthWithoutItIsRefused() {
        FramedWire server = new FramedWire(64, 4, List.of("echo"));
        ByteBuffer forged = traced(frame(FramedWire.REQUEST, 0, 1, new byte[0], "echo"),
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7\n1");
        assertThat(server.read(forged, forged.limit())).isEqualTo(WireFormat.Kind.REQUEST);
        assertThat(server.traceParent()).as("not of the W3C format: not propagated").isNull();

        ByteBuffer flagOnly = frame(FramedWire.REQUEST, 0, 2, new byte[0], "echo");
        flagOnly.put(6, (byte) RpmaFraming.TRACE_CONTEXT);
        assertThatThrownBy(() -> server.read(flagOnly, flagOnly.limit())).isInstanceOf(RpmaProtocolException.class)
            .hasMessageContaining("trace context 55");
    }

    @Test
    void onlyTheSideThatTakesTraceContextSaysSoInItsHelloAndTheOtherRefusesIt() {
        RpmaFraming server = new RpmaFraming(64, 4, true);
        RpmaFraming client = new RpmaFraming(64, 4, false);
        ByteBuffer serverHello = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer clientHello = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
        int serverLength = server.controlFrame(serverHello, true);
        int clientLength = client.controlFrame(clientHello, true);
        assertThat(serverHello.get(6)).isEqualTo((byte) RpmaFraming.TRACE_CONTEXT);
        assertThat(clientHello.get(6)).isZero();
        assertThat(client.peerTakesTraceContext()).isFalse();
        client.read(serverHello, serverLength);
        server.read(clientHello, clientLength);
        assertThat(client.peerTakesTraceContext()).isTrue();
        assertThat(server.peerTakesTraceContext()).isFalse();

        ByteBuffer message = traced(frame(FramedWire.MESSAGE, 0, 0, new byte[0], ""),
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        assertThatThrownBy(() -> client.read(message, message.limit())).isInstanceOf(RpmaProtocolException.class)
            .hasMessageContaining("did not offer");
    }

    @Test
    void aSlotHoldsTheLargestFrameWithATraceContext() {
        assertThat(FramedWire.slotSize(64)).isEqualTo(16 + 64 + 64 + 55);
    }

    @Test
    void theFirstFrameIsAHelloThatGrantsEveryReceiveButTheAssumedOne() {
        FramedWire side = new FramedWire(64, 8, List.of(""));
        ByteBuffer slot = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(side.maySend()).as("nothing before the HELLO").isFalse();
        assertThat(side.controlFrame(slot, false)).as("not before ESTABLISHED").isZero();
        assertThat(side.controlFrame(slot, true)).isEqualTo(20);
        assertThat(slot.get(2)).isEqualTo((byte) FramedWire.HELLO);
        assertThat(slot.getShort(4)).isEqualTo((short) 7);
        assertThat(slot.getInt(16)).as("the largest payload it takes").isEqualTo(64);
        assertThat(side.credits()).isZero();
    }

    @Test
    void randomTrafficNeverOverrunsAReceiverNeverDeadlocksAndCreditFramesDieDown() {
        for (long seed = 0; seed < 2_000; seed++) {
            Random random = new Random(seed);
            int slotsA = 3 + random.nextInt(6);
            int slotsB = 3 + random.nextInt(6);
            Side a = new Side("a", slotsA);
            Side b = new Side("b", slotsB);
            a.peer = b;
            b.peer = a;
            a.handshake();
            b.handshake();
            int messages = 0;
            for (int step = 0; step < 400; step++) {
                int action = random.nextInt(10);
                Side side = random.nextBoolean() ? a : b;
                if (action < 3) {
                    side.wanted++;
                    messages++;
                }
                else {
                    side.step(random, seed);
                }
            }
            // traffic stops: everything wanted must arrive, and the credit frames must stop
            int idle = 0;
            for (int step = 0; step < 50_000 && idle < 500; step++) {
                Side side = random.nextBoolean() ? a : b;
                idle = side.step(random, seed) ? 0 : idle + 1;
            }
            assertThat(idle).as("seed %d: the sides kept sending each other frames", seed).isGreaterThanOrEqualTo(500);
            assertThat(a.wanted + b.wanted).as("seed %d: messages stuck (a credits %d, b credits %d)", seed,
                    a.wire.credits(), b.wire.credits()).isZero();
            assertThat(a.delivered + b.delivered).as("seed %d", seed).isEqualTo(messages);
            assertThat(a.busy() || b.busy()).as("seed %d: frames still flowing after traffic stopped", seed).isFalse();
            assertThat(a.creditFrames + b.creditFrames).as("seed %d: credit frames per message", seed)
                .isLessThanOrEqualTo(messages + 4);
        }
    }

    /** One side of a connection: its wire format, its posted receives, and what waits on the wire to it. */
    private static final class Side {

        final String name;

        final FramedWire wire;

        Side peer;

        /** Receives posted now. */
        int posted;

        /** Frames received into receives, not yet handled (their receives not yet posted again). */
        final ArrayDeque<ByteBuffer> received = new ArrayDeque<>();

        /** Frames on the wire towards this side. */
        final ArrayDeque<ByteBuffer> arriving = new ArrayDeque<>();

        int wanted;

        int delivered;

        int creditFrames;

        Side(String name, int slots) {
            this.name = name;
            this.wire = new FramedWire(64, slots, List.of(""));
            this.posted = slots;
        }

        void handshake() {
            ByteBuffer slot = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
            int length = this.wire.controlFrame(slot, true);
            assertThat(length).isPositive();
            this.peer.arriving.add(slot.limit(length));
        }

        boolean busy() {
            return !this.received.isEmpty() || !this.arriving.isEmpty() || this.wanted > 0;
        }

        /** One random thing this side does; whether it did something. */
        boolean step(Random random, long seed) {
            switch (random.nextInt(4)) {
                case 0 -> {
                    // a frame arrives: it takes one of this side's posted receives
                    ByteBuffer frame = this.arriving.poll();
                    if (frame == null) {
                        return false;
                    }
                    assertThat(this.posted).as("seed %d: a frame reached %s with no receive posted", seed, this.name)
                        .isPositive();
                    this.posted--;
                    this.received.add(frame);
                    return true;
                }
                case 1 -> {
                    // the application handles a received frame; its receive is posted again
                    ByteBuffer frame = this.received.poll();
                    if (frame == null) {
                        return false;
                    }
                    WireFormat.Kind kind = this.wire.read(frame, frame.limit());
                    if (kind != WireFormat.Kind.CONTROL) {
                        this.delivered++;
                    }
                    this.posted++;
                    this.wire.receiveReposted();
                    return true;
                }
                case 2 -> {
                    if (this.wanted == 0 || !this.wire.maySend()) {
                        return false;
                    }
                    ByteBuffer slot = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
                    this.wire.writeHeader(slot, 1, -1, false);
                    this.peer.arriving.add(slot.limit(FramedWire.HEADER_SIZE + 1));
                    this.wanted--;
                    return true;
                }
                default -> {
                    ByteBuffer slot = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
                    int length = this.wire.controlFrame(slot, true);
                    if (length == 0) {
                        return false;
                    }
                    this.creditFrames++;
                    this.peer.arriving.add(slot.limit(length));
                    return true;
                }
            }
        }
    }

    /** {@code frame} with the trace context flag set and {@code traceParent} after its route. */
    private static ByteBuffer traced(ByteBuffer frame, String traceParent) {
        int end = frame.limit();
        frame.limit(end + RpmaFraming.TRACE_CONTEXT_LENGTH);
        frame.put(6, (byte) RpmaFraming.TRACE_CONTEXT).put(end, traceParent.getBytes(StandardCharsets.US_ASCII));
        return frame;
    }

    private static ByteBuffer frame(int type, int credits, int requestId, byte[] payload, String route) {
        byte[] routeBytes = route.getBytes(StandardCharsets.UTF_8);
        ByteBuffer frame = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
        frame.put(0, (byte) 'R').put(1, (byte) 1).put(2, (byte) type).put(3, (byte) routeBytes.length);
        frame.putShort(4, (short) credits).putInt(8, requestId).putInt(12, payload.length);
        frame.put(16, payload).put(16 + payload.length, routeBytes);
        frame.limit(16 + payload.length + routeBytes.length);
        return frame;
    }
}
