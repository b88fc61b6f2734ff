package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.testing.FakeConnection;

/**
 * A framed endpoint over the scripted fake, its client played by the test: the HELLO, requests
 * routed to handlers and their replies correlated by request id, error replies, and credits that keep
 * the server from sending what the client has no receive for (the fake counts the client's receives).
 */
class FramedSessionTest {

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void nothingLeaks() {
        this.harness.closeAndAssertNothingLeaked();
    }

    private FakeConnection start() {
        this.harness.messages = this.harness.messages.withMode(RpmaWireMode.FRAMED);
        this.harness.messageHandlers.put("echo", (message, session) -> message);
        this.harness.messageHandlers.put("length", (message, session) -> {
            ByteBuffer reply = session.newMessage();
            return reply.putInt(message.remaining()).flip();
        });
        this.harness.messageHandlers.put("nothing", (message, session) -> null);
        this.harness.messageHandlers.put("fail", (message, session) -> {
            throw new IllegalStateException("on purpose");
        });
        this.harness.start(RpmaIncomingRequest::connect);
        return this.harness.connectOne();
    }

    @Test
    void theServersFirstFrameIsAHelloGrantingItsReceives() {
        FakeConnection client = start();
        this.harness.await("the HELLO", () -> client.sent().size() == 1);
        Frame hello = Frame.of(client.sent().get(0));
        assertThat(hello.type).isEqualTo(FramedWire.HELLO);
        assertThat(hello.credits).as("8 receive slots, one assumed by the client").isEqualTo(7);
        assertThat(ByteBuffer.wrap(hello.payload).order(ByteOrder.LITTLE_ENDIAN).getInt()).isEqualTo(64);
    }

    @Test
    void requestsAreRoutedAndRepliesCarryTheirRequestIds() {
        FakeConnection client = start();
        client.deliver(Frame.hello(7, 64));
        client.deliver(Frame.request(41, "echo", "ping".getBytes(StandardCharsets.US_ASCII)));
        client.deliver(Frame.request(42, "length", new byte[11]));
        client.deliver(Frame.request(43, "nothing", new byte[1]));
        this.harness.await("three replies", () -> answers(client).size() == 3);
        List<Frame> frames = answers(client);
        assertThat(frames).extracting((frame) -> frame.type).containsOnly(FramedWire.REPLY);
        assertThat(frames).extracting((frame) -> frame.requestId).containsExactly(41, 42, 43);
        assertThat(new String(frames.get(0).payload, StandardCharsets.US_ASCII)).isEqualTo("ping");
        assertThat(ByteBuffer.wrap(frames.get(1).payload).order(ByteOrder.LITTLE_ENDIAN).getInt()).isEqualTo(11);
        assertThat(frames.get(2).payload).as("a void handler answers a request empty").isEmpty();
    }

    @Test
    void aFailingHandlerAndAnUnknownRouteAnswerWithAnErrorAndTheSessionGoesOn() {
        FakeConnection client = start();
        client.deliver(Frame.hello(7, 64));
        client.deliver(Frame.request(1, "fail", new byte[1]));
        client.deliver(Frame.request(2, "missing\n", new byte[1]));
        client.deliver(Frame.request(3, "echo", new byte[] { 9 }));
        this.harness.await("three answers", () -> answers(client).size() == 3);
        List<Frame> frames = answers(client);
        assertThat(frames.get(0).type).isEqualTo(FramedWire.ERROR);
        assertThat(new String(frames.get(0).payload, StandardCharsets.UTF_8)).contains("IllegalStateException");
        assertThat(frames.get(1).type).isEqualTo(FramedWire.ERROR);
        assertThat(new String(frames.get(1).payload, StandardCharsets.UTF_8))
            .as("the route is escaped").contains("missing\\x0a");
        assertThat(frames.get(2).type).isEqualTo(FramedWire.REPLY);
        assertThat(this.harness.statistics().handlerFailures()).isEqualTo(1);
    }

    @Test
    void theServerSendsOnlyWhatTheClientHasReceivesForAndGoesOnWhenCreditsCome() {
        FakeConnection client = start();
        // the client posted 3 receives: one assumed by the server, two granted by its HELLO
        client.peerReceives(3);
        this.harness.await("the HELLO", () -> client.sent().size() == 1);
        client.deliver(Frame.hello(2, 64));
        for (int id = 1; id <= 5; id++) {
            client.deliver(Frame.request(id, "echo", new byte[] { (byte) id }));
        }
        // a message needs two credits (one is kept for a CREDIT frame): one reply goes, four wait
        this.harness.await("the first reply", () -> answers(client).size() == 1
                && this.harness.statistics().sendsWaiting() == 4);
        assertThat(client.sent()).as("the HELLO, the reply, perhaps a CREDIT frame: at most the client's three receives")
            .hasSizeBetween(2, 3);
        assertThat(client.sendsWaitingForPeer()).as("nothing ever waits in the device for a receive").isZero();

        // the client handled frames and posted their receives again
        client.grantPeerReceives(2);
        client.deliver(Frame.credit(2));
        this.harness.await("one more reply", () -> answers(client).size() == 2);
        assertThat(client.sendsWaitingForPeer()).isZero();
        client.grantPeerReceives(5);
        client.deliver(Frame.credit(5));
        this.harness.await("every reply", () -> answers(client).size() == 5);
        assertThat(answers(client)).extracting((frame) -> frame.requestId).containsExactly(1, 2, 3, 4, 5);
        assertThat(client.sendsWaitingForPeer()).isZero();
        this.harness.await("none waits", () -> this.harness.statistics().sendsWaiting() == 0);
    }

    /** The replies and errors the client received, in order. */
    private static List<Frame> answers(FakeConnection client) {
        return client.sent().stream().map(Frame::of)
            .filter((frame) -> frame.type == FramedWire.REPLY || frame.type == FramedWire.ERROR).toList();
    }

    @Test
    void theServerGrantsItsReceivesBackWithItsReplies() {
        FakeConnection client = start();
        client.deliver(Frame.hello(7, 64));
        client.deliver(Frame.request(1, "echo", new byte[] { 1 }));
        this.harness.await("the reply", () -> answers(client).size() == 1);
        Frame reply = answers(client).get(0);
        // the HELLO and the request took two receives, both posted again before the reply's header was written
        assertThat(reply.credits).isEqualTo(2);
    }

    @Test
    void aFrameThatIsNotOfTheProtocolEndsTheSession() {
        FakeConnection client = start();
        client.deliver("GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.ERROR);
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.MALFORMED)).isEqualTo(1);
    }

    @Test
    void aRequestIdAboveTwoToTheThirtyOneMinusOneIsOutOfProtocol() {
        FakeConnection client = start();
        client.deliver(Frame.request(0x8000_0000, "echo", new byte[] { 1 }));
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).detail()).contains("above the largest, 2^31 - 1");
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.MALFORMED)).isEqualTo(1);
    }

    @Test
    void theServersHelloSaysItTakesATraceContext() {
        FakeConnection client = start();
        this.harness.await("the HELLO", () -> client.sent().size() == 1);
        assertThat(client.sent().get(0)[6]).isEqualTo((byte) RpmaFraming.TRACE_CONTEXT);
    }

    @Test
    void aRequestWithATraceContextIsHandledThroughTheObserverWithItsTraceParentAndOthersAreNot() {
        tracedRequestsGoThroughTheObserver();
    }

    @Test
    void onTheMessagePoolToo() {
        this.harness.messages = this.harness.messages.withDispatch(RpmaMessageDispatch.POOL, 1);
        tracedRequestsGoThroughTheObserver();
    }

    private void tracedRequestsGoThroughTheObserver() {
        List<String> traced = new CopyOnWriteArrayList<>();
        this.harness.observer = new RpmaServerObserver() {
            @Override
            public Object handleTraced(String endpoint, RpmaMessageListener handler, String traceParent,
                    ByteBuffer message, RpmaSession session) throws Exception {
                traced.add(traceParent);
                return handler.onMessage(message, session);
            }
        };
        String traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        FakeConnection client = start();
        client.deliver(Frame.hello(7, 64));
        client.deliver(Frame.request(1, "echo", "plain".getBytes(StandardCharsets.US_ASCII)));
        client.deliver(Frame.traced(Frame.request(2, "echo", "traced".getBytes(StandardCharsets.US_ASCII)), traceParent));
        this.harness.await("two replies", () -> answers(client).size() == 2);
        assertThat(answers(client)).extracting((frame) -> new String(frame.payload, StandardCharsets.US_ASCII))
            .containsExactly("plain", "traced");
        assertThat(traced).as("only the traced request, with its traceparent").containsExactly(traceParent);
    }

    /** One frame, as the test's client writes and reads them. */
    static final class Frame {

        int type;

        int credits;

        int requestId;

        byte[] payload;

        static Frame of(byte[] bytes) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            Frame frame = new Frame();
            frame.type = buffer.get(2);
            frame.credits = buffer.getShort(4) & 0xFFFF;
            frame.requestId = buffer.getInt(8);
            frame.payload = new byte[buffer.getInt(12)];
            buffer.get(16, frame.payload);
            return frame;
        }

        static byte[] hello(int credits, int maxPayload) {
            return build(FramedWire.HELLO, credits, 0, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(0, maxPayload).array(), "");
        }

        static byte[] request(int id, String route, byte[] payload) {
            return build(FramedWire.REQUEST, 0, id, payload, route);
        }

        /** {@code frame} with the trace context flag set and {@code traceParent} after its route. */
        static byte[] traced(byte[] frame, String traceParent) {
            byte[] traced = Arrays.copyOf(frame, frame.length + RpmaFraming.TRACE_CONTEXT_LENGTH);
            traced[6] = RpmaFraming.TRACE_CONTEXT;
            System.arraycopy(traceParent.getBytes(StandardCharsets.US_ASCII), 0, traced, frame.length,
                    RpmaFraming.TRACE_CONTEXT_LENGTH);
            return traced;
        }

        static byte[] credit(int credits) {
            return build(FramedWire.CREDIT, credits, 0, new byte[0], "");
        }

        static byte[] build(int type, int credits, int requestId, byte[] payload, String route) {
            byte[] routeBytes = route.getBytes(StandardCharsets.UTF_8);
            ByteBuffer frame = ByteBuffer.allocate(16 + payload.length + routeBytes.length).order(ByteOrder.LITTLE_ENDIAN);
            frame.put(0, (byte) 'R').put(1, (byte) 1).put(2, (byte) type).put(3, (byte) routeBytes.length);
            frame.putShort(4, (short) credits).putInt(8, requestId).putInt(12, payload.length);
            frame.put(16, payload).put(16 + payload.length, routeBytes);
            return frame.array();
        }
    }
}
