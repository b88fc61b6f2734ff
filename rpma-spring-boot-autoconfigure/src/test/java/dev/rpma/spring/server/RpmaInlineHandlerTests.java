package dev.rpma.spring.server;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.RpmaConnectionEvent;
import dev.rpma.jna.testing.FakeConnection;
import dev.rpma.jna.testing.FakeEndpoint;
import dev.rpma.jna.testing.FakeLibRpma;
import dev.rpma.jna.testing.FakeRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An endpoint whose handler runs on the acceptor thread ({@link RpmaEndpointSettings#inlineHandler()}),
 * over the scripted fake: the handler sees its requests there, connects, rejects and fails there, and the
 * connections it accepts are tracked and torn down as those of a handler thread.
 */
class RpmaInlineHandlerTests {

    private static final String ADDRESS = "198.18.0.1";

    private static final String ACCEPTOR = "rpma-acceptor-default";

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final byte[] HELLO = "Hello server!\0".getBytes(StandardCharsets.US_ASCII);

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final List<String> handlerThreads = new CopyOnWriteArrayList<>();

    private final List<String> events = new CopyOnWriteArrayList<>();

    private final List<String> observed = new CopyOnWriteArrayList<>();

    /** Records which hooks ran, so a test sees whether a request waited in a queue. */
    private final RpmaServerObserver observer = new RpmaServerObserver() {

        @Override
        public void queueWait(String endpoint, Duration wait) {
            RpmaInlineHandlerTests.this.observed.add("queueWait");
        }

        @Override
        public <T> T handle(RpmaIncomingRequest request, String handlerName, java.util.function.Supplier<T> invocation) {
            RpmaInlineHandlerTests.this.observed.add("handle " + handlerName);
            return invocation.get();
        }
    };

    private RpmaServer server;

    private FakeEndpoint endpoint;

    @AfterEach
    void releasesEverythingOnTheOwnerThread() {
        try {
            if (this.server != null) {
                this.server.close();
                RpmaEndpointStatistics statistics = statistics();
                assertThat(statistics.obtained())
                        .isEqualTo(statistics.accepted() + statistics.failedToConnect() + statistics.rejectedTotal());
                assertThat(statistics.activeConnections()).isZero();
            }
            this.fake.assertNoViolations();
            this.fake.assertAllFreed();
        }
        finally {
            this.fake.close();
        }
    }

    @Test
    void theHandlerRunsOnTheAcceptorThreadAndItsConnectionIsTornDownThere() {
        start((request) -> request.connect("Hello client!\0".getBytes(StandardCharsets.US_ASCII)));
        FakeRequest request = this.endpoint.queueRequest(HELLO);
        await("the connect", () -> request.connection() != null);
        FakeConnection connection = request.connection();
        await("ESTABLISHED", () -> this.events.contains("ESTABLISHED"));
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        await("the delete", connection::isDeleted);

        assertThat(this.handlerThreads).containsExactly(ACCEPTOR);
        assertThat(request.consumedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(connection.disconnects()).isEqualTo(1);
        assertThat(connection.deletedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(this.events).containsExactly("ESTABLISHED", "CLOSED");
        assertThat(statistics().accepted()).isEqualTo(1);
    }

    @Test
    void aRequestTheHandlerRejectsIsRejectedAtOnceOnTheAcceptorThread() {
        start(RpmaIncomingRequest::reject);
        FakeRequest request = this.endpoint.queueRequest(HELLO);
        assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);

        assertThat(request.consumedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(statistics().rejected(RejectReason.HANDLER)).isEqualTo(1);
    }

    @Test
    void aHandlerThatThrowsLosesItsRequestAndTheEndpointGoesOnServing() {
        start((request) -> {
            if (request.privateData()[0] == 'X') {
                throw new IllegalStateException("handler bug");
            }
            request.connect();
        });
        FakeRequest failing = this.endpoint.queueRequest("X".getBytes(StandardCharsets.US_ASCII));
        FakeRequest next = this.endpoint.queueRequest(HELLO);
        assertThat(failing.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
        assertThat(next.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
        // queued after the connect: an inline handler may connect before thenEvents() could script it
        next.connection().queueEvent(RpmaConnectionEvent.CLOSED);
        await("the second connection's teardown", () -> next.connection().isDeleted());

        assertThat(statistics().rejected(RejectReason.HANDLER_FAILED)).isEqualTo(1);
        assertThat(statistics().accepted()).isEqualTo(1);
        assertThat(this.endpoint.isShutDown()).isFalse();
    }

    @Test
    void anInlineHandlerIsObservedButRecordsNoQueueWaitSinceItHasNoQueue() {
        start(RpmaIncomingRequest::reject);
        FakeRequest request = this.endpoint.queueRequest(HELLO);
        assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);

        assertThat(this.observed).containsExactly("handle recording");
    }

    @Test
    void settingsWithoutTheFlagKeepHandlersOffTheAcceptorThread() {
        RpmaEndpointSettings settings = new RpmaEndpointSettings(RpmaEndpointSettings.DEFAULT_ENDPOINT, ADDRESS, 7204,
                8, 2, Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ZERO, 10);
        assertThat(settings.inlineHandler()).isFalse();
        start(settings, RpmaIncomingRequest::reject);
        FakeRequest request = this.endpoint.queueRequest(HELLO);
        assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);

        assertThat(this.handlerThreads).singleElement().asString().startsWith("rpma-default-handler-");
        assertThat(this.observed).containsExactly("queueWait", "handle recording");
    }

    private void start(RpmaRequestHandler handler) {
        start(new RpmaEndpointSettings(RpmaEndpointSettings.DEFAULT_ENDPOINT, ADDRESS, 7204, 8, 2,
                Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ZERO, 10, true), handler);
    }

    private void start(RpmaEndpointSettings settings, RpmaRequestHandler handler) {
        RpmaRequestHandler recording = new RpmaRequestHandler() {

            @Override
            public void handle(RpmaIncomingRequest request) throws Exception {
                RpmaInlineHandlerTests.this.handlerThreads.add(Thread.currentThread().getName());
                handler.handle(request);
            }

            @Override
            public String name() {
                return "recording";
            }
        };
        this.server = RpmaServer.listen(Rpma.using(this.fake), List.of(settings), new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String endpointName) {
                return recording;
            }

            @Override
            public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings endpoint) {
                return rpma.newConnectionConfig();
            }

            @Override
            public RpmaServerObserver observer() {
                return RpmaInlineHandlerTests.this.observer;
            }

            @Override
            public List<RpmaConnectionEventListener> listeners() {
                return List.of((connection, event) -> RpmaInlineHandlerTests.this.events.add(event.name()));
            }
        });
        this.endpoint = this.fake.endpointAt(ADDRESS, 7204);
        this.server.start();
    }

    private RpmaEndpointStatistics statistics() {
        return this.server.endpoint(RpmaEndpointSettings.DEFAULT_ENDPOINT).statistics();
    }

    private void await(String what, java.util.function.BooleanSupplier condition) {
        if (!this.fake.await(WAIT, condition)) {
            throw new AssertionError("timed out waiting for " + what + "; violations: " + this.fake.violations());
        }
    }
}
