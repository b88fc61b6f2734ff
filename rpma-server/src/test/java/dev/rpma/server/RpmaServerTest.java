package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.Errno;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.FakeCall;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;

/**
 * The server as a whole over the fake: what a failed listen leaves (nothing), exposed regions and
 * their order of release, the queue sizes a data path needs, and a stop that ends even when an event
 * loop is held by a handler.
 */
class RpmaServerTest {

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.close();
    }

    @Test
    void aListenThatFailsReleasesEverythingCreatedBeforeIt() {
        this.harness.fake.failNext("rpma_ep_listen", RpmaError.PROVIDER.code(), Errno.EADDRINUSE);
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .isInstanceOfSatisfying(RpmaListenException.class, (ex) -> {
                assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.PORT_IN_USE);
                assertThat(ex.endpointName()).isEqualTo("default");
                assertThat(ex.getMessage()).contains("198.18.0.1:7204");
            });
        this.harness.fake.assertNoViolations();
        this.harness.fake.assertAllFreed();
        this.harness.server = null;
    }

    @Test
    void aRawEndpointWithTwoMessageHandlersFailsBeforeAnythingNativeIsMade() {
        this.harness.messageHandlers.put("a", (message, session) -> null);
        this.harness.messageHandlers.put("b", (message, session) -> null);
        // no device either: the wiring mistake is what the user is told
        this.harness.fake.failNext("rpma_utils_get_ibv_context", RpmaError.PROVIDER.code(), Errno.ENODEV);
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("is raw, so its messages have no route, but it has 2 message handlers");
        assertThat(this.harness.fake.callLog()).as("no librpma call").isEmpty();
        this.harness.server = null;
    }

    @Test
    void aRouteLongerThanAFrameTakesFailsBeforeAnythingNativeIsMade() {
        this.harness.messages = this.harness.messages.withMode(RpmaWireMode.FRAMED);
        this.harness.messageHandlers.put("r".repeat(65), (message, session) -> null);
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("is longer than 64 bytes");
        assertThat(this.harness.fake.callLog()).as("no librpma call").isEmpty();
        this.harness.server = null;
    }

    @Test
    void aRegionIsRegisteredOnceWithItsUsagesAndItsDescriptorGoesIntoTheAccept() {
        ByteBuffer memory = NativeMemory.allocate(14).put(0, "Hello client!\0".getBytes());
        this.harness.regions.add(RpmaRegionDefinition.readOnly("greeting", memory));
        this.harness.start((request) -> request.connect(RpmaCommonData.of(request.regionDescriptor("greeting")).encode()));
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);

        RpmaCommonData data = RpmaCommonData.decode(request.connectPrivateData());
        ByteBuffer descriptor = ByteBuffer.wrap(data.memoryRegionDescriptor()).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(descriptor.getLong(0)).as("the region's address").isEqualTo(NativeMemory.address(memory));
        assertThat(descriptor.getLong(8)).isEqualTo(14);
        assertThat(descriptor.get(20)).as("read-only: READ_SRC alone").isEqualTo((byte) MemoryUsage.READ_SRC.flag());
        assertThat(this.harness.fake.calls("rpma_mr_reg")).isOne();
        assertThat(this.harness.server.regions().memory("greeting")).isSameAs(memory);
    }

    @Test
    void regionsAreDeregisteredAfterTheLastConnectionAndBeforeThePeer() {
        this.harness.regions.add(RpmaRegionDefinition.readOnly("greeting", NativeMemory.allocate(8)));
        this.harness.messageHandlers.put("", (message, session) -> message);
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.connectOne();
        this.harness.stop();

        List<FakeCall> calls = this.harness.fake.callLog();
        long lastDelete = last(calls, "rpma_conn_delete");
        long peerDelete = last(calls, "rpma_peer_delete");
        List<FakeCall> deregistrations = calls.stream().filter((call) -> call.function().equals("rpma_mr_dereg")).toList();
        assertThat(deregistrations).as("the region and the slots' chunk: its receive and its send slots").hasSize(3)
            .allSatisfy((call) -> assertThat(call.sequence()).isBetween(lastDelete, peerDelete));
        this.harness.fake.assertNoViolations();
        this.harness.fake.assertAllFreed();
    }

    @Test
    void aRegionThatDoesNotServeAnEndpointGivesItNoDescriptor() {
        this.harness.regions.add(new RpmaRegionDefinition("private", NativeMemory.allocate(8),
                EnumSet.of(MemoryUsage.WRITE_DST), Set.of("default")));
        this.harness.start((request) -> {
            try {
                request.regionDescriptor("elsewhere");
            }
            finally {
                request.reject();
            }
        });
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isOne();
        assertThatThrownBy(() -> this.harness.server.regions().definition("elsewhere"))
            .hasMessageContaining("No region is named 'elsewhere'; the regions are [private]");
    }

    @Test
    void aRegionNamingAnUnknownEndpointOrAnUsageForMessagesIsRefused() {
        assertThatThrownBy(() -> new RpmaRegionDefinition("r", NativeMemory.allocate(8), EnumSet.of(MemoryUsage.SEND),
                Set.of())).hasMessageContaining("not for exposed memory");
        assertThatThrownBy(() -> new RpmaRegionDefinition("r", ByteBuffer.allocate(8), EnumSet.of(MemoryUsage.READ_SRC),
                Set.of())).hasMessageContaining("direct ByteBuffer");
        this.harness.regions.add(new RpmaRegionDefinition("r", NativeMemory.allocate(8),
                EnumSet.of(MemoryUsage.READ_SRC), Set.of("nowhere")));
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .hasMessageContaining("names endpoint 'nowhere'");
        this.harness.fake.assertAllFreed();
        this.harness.server = null;
    }

    @Test
    void queuesTooSmallForTheSlotsAreRefusedWithWhatTheyNeed() {
        this.harness.messageHandlers.put("", (message, session) -> null);
        RpmaServerSettings settings = RpmaServerSettings.of(List.of(this.harness.settings()));
        assertThatThrownBy(() -> RpmaServer.listen(Rpma.using(this.harness.fake), settings, components(
                (rpma) -> rpma.newConnectionConfig().cqSize(4))))
            .hasMessageContaining("need cq >= 16, sq >= 8, rq >= 8");
        assertThatThrownBy(() -> RpmaServer.listen(Rpma.using(this.harness.fake), settings, components(
                (rpma) -> rpma.newConnectionConfig().cqSize(16).rcqSize(8))))
            .hasMessageContaining("leave the rcq size at 0");
        this.harness.fake.assertAllFreed();
    }

    @Test
    void aStopEndsWhenAHandlerHoldsItsEventLoopForEver() throws InterruptedException {
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch holding = new CountDownLatch(1);
        this.harness.shutdownTimeout = Duration.ofSeconds(1);
        this.harness.startRaw((message, session) -> {
            holding.countDown();
            never.await();
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        client.deliver(ServerHarness.u64(1));
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        CountDownLatch stopped = new CountDownLatch(1);
        this.harness.server.stop(stopped::countDown);
        Duration bound = this.harness.gracePeriod.plus(this.harness.shutdownTimeout).plus(Duration.ofSeconds(5));
        assertThat(stopped.await(bound.toMillis(), TimeUnit.MILLISECONDS)).as("the stop ended").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(bound);
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.STOPPED);
        never.countDown();
        // the loop was given up on: what it owned is left to the process's exit, not freed under it
        assertThat(this.harness.fake.liveHandles(FakeLibRpma.Kind.PEER)).hasSize(1);
        this.harness.fake.assertNoViolations();
    }

    private static long last(List<FakeCall> calls, String function) {
        return calls.stream().filter((call) -> call.function().equals(function)).mapToLong(FakeCall::sequence).max()
            .orElseThrow();
    }

    private RpmaServer.Components components(java.util.function.Function<Rpma, RpmaConnectionConfig> config) {
        return new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String endpoint) {
                return RpmaIncomingRequest::connect;
            }

            @Override
            public Map<String, RpmaMessageListener> messageListeners(String endpoint) {
                return RpmaServerTest.this.harness.messageHandlers;
            }

            @Override
            public @Nullable RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings,
                    RpmaQueueSizes needed) {
                return config.apply(rpma);
            }
        };
    }
}
