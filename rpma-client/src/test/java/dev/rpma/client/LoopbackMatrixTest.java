package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageDispatch;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaWireMode;

/**
 * The real server and the real client over one {@link FakeLibRpma#loopback()}, in every combination
 * of the settings that change how messages move: wire mode, message size (1 byte, one short of the
 * maximum, the maximum), receive slots and so credits (the fewest framing allows, the default),
 * receives of the session's own or through a shared receive queue (raw mode only), handlers on the
 * event loop or on a pool, one server event loop or two, one pooled client connection or three, one
 * request in flight or many. Every case checks each reply against its request's bytes, the server's
 * counters against what the client sent, librpma's rules, and that both sides freed everything.
 */
class LoopbackMatrixTest {

    private static final int MAX = RpmaEndpointSettings.Messages.DEFAULT_MAX_MESSAGE_SIZE;

    private static final String ROUTE = "mirror";

    /** Enough to go round the smallest receive and send windows many times. */
    private static final int REQUESTS = 24;

    /** Raw mode's receives: the session's own (shared 0) or a shared receive queue of that many slots. */
    record Receives(int slots, int shared) {

        @Override
        public String toString() {
            return (this.shared > 0) ? "srq " + this.shared : "own " + this.slots;
        }
    }

    record Case(RpmaWireMode mode, int size, Receives receives, RpmaMessageDispatch dispatch, int serverLoops,
            int poolSize, int inFlight) {

        @Override
        public String toString() {
            return this.mode + ", " + this.size + " B, " + this.receives + ", " + this.dispatch + ", loops "
                    + this.serverLoops + ", pool " + this.poolSize + ", in flight " + this.inFlight;
        }
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        int[] sizes = { 1, MAX - 1, MAX };
        for (RpmaWireMode mode : RpmaWireMode.values()) {
            List<Receives> receives = new ArrayList<>(List.of(
                    new Receives(RpmaEndpointSettings.Messages.MIN_FRAMED_RECEIVE_SLOTS, 0),
                    new Receives(RpmaEndpointSettings.Messages.DEFAULT_RECEIVE_SLOTS, 0)));
            if (mode == RpmaWireMode.RAW) {
                receives.add(new Receives(RpmaEndpointSettings.Messages.DEFAULT_RECEIVE_SLOTS, 3));
                receives.add(new Receives(RpmaEndpointSettings.Messages.DEFAULT_RECEIVE_SLOTS, 64));
            }
            for (int size : sizes) {
                for (Receives receive : receives) {
                    for (RpmaMessageDispatch dispatch : RpmaMessageDispatch.values()) {
                        for (int loops : new int[] { 1, 2 }) {
                            for (int pool : new int[] { 1, 3 }) {
                                for (int inFlight : new int[] { 1, 8 }) {
                                    cases.add(Arguments.of(new Case(mode, size, receive, dispatch, loops, pool, inFlight)));
                                }
                            }
                        }
                    }
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void everyReplyAnswersItsRequestAndTheServerCountsWhatTheClientSent(Case c) throws Exception {
        boolean framed = c.mode() == RpmaWireMode.FRAMED;
        RpmaEndpointSettings.Messages messages = RpmaEndpointSettings.Messages.DEFAULTS.withMode(c.mode())
            .withSlots(c.receives().slots(), RpmaEndpointSettings.Messages.DEFAULT_SEND_SLOTS)
            .withSharedReceiveSlots(c.receives().shared())
            .withDispatch(c.dispatch(), 2);
        AtomicInteger handled = new AtomicInteger();
        RpmaMessageListener mirror = (message, session) -> {
            handled.incrementAndGet();
            return mirror(message);
        };
        FakeLibRpma fake = FakeLibRpma.loopback();
        List<byte[]> payloads = new ArrayList<>();
        try (LoopbackServer server = LoopbackServer.start(fake, 7300, c.serverLoops(), messages,
                RpmaIncomingRequest::connect, Map.of(framed ? ROUTE : "", mirror), List.of())) {
            RpmaClientBuilder builder = server.client("matrix").mode(c.mode()).maxMessageSize(MAX)
                .poolSize(c.poolSize()).receiveSlots(Math.max(2, c.receives().slots()))
                .rawWindow(c.inFlight());
            try (RpmaClient client = builder.build()) {
                List<CompletableFuture<byte[]>> window = new ArrayList<>();
                for (int i = 0; i < REQUESTS; i++) {
                    byte[] payload = payload(i, c.size());
                    payloads.add(payload);
                    window.add(framed ? client.request(ROUTE, payload) : client.exchange(payload));
                    if (window.size() == c.inFlight() || i == REQUESTS - 1) {
                        int first = i + 1 - window.size();
                        for (int k = 0; k < window.size(); k++) {
                            byte[] reply = window.get(k).get(LoopbackServer.WAIT.toMillis(), TimeUnit.MILLISECONDS);
                            assertThat(reply).as("the reply to request %d", first + k)
                                .isEqualTo(mirror(ByteBuffer.wrap(payloads.get(first + k))));
                        }
                        window.clear();
                    }
                }
                assertThat(client.inFlight()).isZero();
                RpmaEndpointStatistics statistics = server.statistics();
                // counted after the post, so possibly after the client had the reply
                server.await("the replies counted", () -> statistics.messagesSent() == REQUESTS
                        && statistics.bytesSent() == (long) REQUESTS * c.size());
                // the framing's own frames (the client's HELLO and CREDITs) are not messages, as the server's are not
                server.await("the requests counted", () -> statistics.messagesReceived() == REQUESTS);
                assertThat(statistics.bytesReceived()).isEqualTo((long) REQUESTS * c.size());
                assertThat(handled).as("each request handled once").hasValue(REQUESTS);
                assertThat(statistics.handlerFailures()).isZero();
                // the pool's last connection may still be on its way when the last reply came
                server.await("every pooled connection a session",
                        () -> server.server.endpoint(LoopbackServer.ENDPOINT).activeConnections() == c.poolSize());
            }
        }
        fake.assertNoViolations();
        fake.assertAllFreed();
        fake.close();
    }

    /** Request {@code index}'s bytes: its own pattern, so that a reply to another request cannot match. */
    private static byte[] payload(int index, int size) {
        byte[] payload = new byte[size];
        for (int i = 0; i < size; i++) {
            payload[i] = (byte) (index * 31 + i * 7 + 1);
        }
        return payload;
    }

    /** The handler's answer: the bytes reversed, each plus one; the same length. */
    private static byte[] mirror(ByteBuffer message) {
        int length = message.remaining();
        byte[] reply = new byte[length];
        for (int i = 0; i < length; i++) {
            reply[length - 1 - i] = (byte) (message.get(message.position() + i) + 1);
        }
        return reply;
    }
}
