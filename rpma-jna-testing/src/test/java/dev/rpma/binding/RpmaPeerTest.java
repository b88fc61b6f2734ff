package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.FakeLibRpma;

/** {@link RpmaPeer} over the scripted fake: opening, children, memory regions, shared receive queues. */
class RpmaPeerTest {

    private final FakeLibRpma fake = new FakeLibRpma();

    private final Rpma rpma = Rpma.using(this.fake);

    @AfterEach
    void close() {
        this.fake.assertCleanAndClose();
    }

    @Test
    void opensOnTheDeviceOfTheAddress() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            assertThat(peer.address()).isEqualTo("198.18.0.1");
            assertThat(peer.role()).isEqualTo(PeerRole.SERVER);
            assertThat(peer.openChildren()).isZero();
            assertThat(peer.isOdpCapable()).isFalse();
            this.fake.odpCapable(true);
            assertThat(peer.isOdpCapable()).isTrue();
            assertThat(this.fake.liveHandles()).extracting(FakeLibRpma.Handle::kind).containsExactly(FakeLibRpma.Kind.PEER);
            assertThat(this.fake.callLog("rpma_utils_get_ibv_context")).singleElement()
                    .satisfies(call -> assertThat(call.args()[0]).as("RPMA_UTIL_IBV_CONTEXT_LOCAL").isZero());
        }
        assertThat(this.fake.calls("rpma_peer_delete")).isOne();
    }

    @Test
    void clientRoleAsksForTheRemoteContext() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.2", PeerRole.CLIENT)) {
            assertThat(this.fake.callLog("rpma_utils_get_ibv_context").get(0).args()[0]).isOne();
        }
    }

    @Test
    void blankAddressIsRejectedWithoutANativeCall() {
        assertThatThrownBy(() -> this.rpma.openPeer(" ", PeerRole.SERVER)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> this.rpma.openPeer(null, PeerRole.SERVER)).isInstanceOf(IllegalArgumentException.class);
        assertThat(this.fake.totalCalls()).isZero();
    }

    @Test
    void noDeviceIsExplained() {
        this.fake.failNext("rpma_utils_get_ibv_context", RpmaError.PROVIDER.code(), Errno.ENODEV);
        assertThatThrownBy(() -> this.rpma.openPeer("198.18.0.1", PeerRole.SERVER))
                .isInstanceOfSatisfying(RpmaException.class, ex -> {
                    assertThat(ex.function()).isEqualTo("rpma_utils_get_ibv_context");
                    assertThat(ex.errno()).isEqualTo(Errno.ENODEV);
                    assertThat(ex.librpmaText()).isEqualTo("Provider error occurred");
                    assertThat(ex.getMessage()).contains("errno 19 (ENODEV)", "No RDMA device serves 198.18.0.1",
                            "soft-RoCE").doesNotContain("tools/");
                    assertThat(ex.hint()).isEqualTo(RpmaFailureKind.NO_DEVICE.hint("198.18.0.1", 0));
                });
        assertThat(this.fake.calls("rpma_peer_new")).isZero();
    }

    @Test
    void otherFailuresGetNoHint() {
        this.fake.failNext("rpma_utils_get_ibv_context", RpmaError.INVAL);
        assertThatThrownBy(() -> this.rpma.openPeer("198.18.0.1", PeerRole.SERVER))
                .hasMessage("rpma_utils_get_ibv_context() failed with RPMA_E_INVAL (-100004): Invalid argument");
        this.fake.failNext("rpma_peer_new", RpmaError.NOMEM);
        assertThatThrownBy(() -> this.rpma.openPeer("198.18.0.1", PeerRole.SERVER))
                .hasMessage("rpma_peer_new() failed with RPMA_E_NOMEM (-100003): Out of memory");
    }

    @Test
    void closeRefusesWhileChildrenAreOpen() {
        RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER);
        RpmaEndpoint endpoint = peer.listen("198.18.0.1", 7204);
        RpmaMemoryRegion region = peer.register(ByteBuffer.allocateDirect(64), MemoryUsage.SEND);
        assertThat(peer.openChildren()).isEqualTo(2);

        assertThatThrownBy(peer::close).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("Close this peer's 2 open endpoint(s)").hasMessageContaining("deletes the peer last");
        assertThat(peer.isClosed()).isFalse();
        assertThat(this.fake.calls("rpma_peer_delete")).isZero();

        region.close();
        endpoint.close();
        peer.close();
        peer.close();
        assertThat(this.fake.calls("rpma_peer_delete")).isOne();

        int before = this.fake.totalCalls();
        assertThatThrownBy(() -> peer.listen("198.18.0.1", 7204)).isInstanceOf(IllegalStateException.class)
                .hasMessage("This peer is closed; create a new one");
        assertThatThrownBy(peer::isOdpCapable).isInstanceOf(IllegalStateException.class);
        assertThat(peer.openChildren()).isZero();
        assertThat(this.fake.totalCalls()).isEqualTo(before);
    }

    @Test
    void memoryRegionDescriptorEncodesAddressSizeAndUsage() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(256);
            try (RpmaMemoryRegion region = peer.register(buffer, MemoryUsage.READ_SRC, MemoryUsage.WRITE_DST)) {
                assertThat(region.address()).isEqualTo(NativeMemory.address(buffer));
                assertThat(region.size()).isEqualTo(256);
                byte[] descriptor = region.descriptor();
                assertThat(descriptor).hasSize(RpmaMemoryRegion.DESCRIPTOR_SIZE);
                ByteBuffer fields = ByteBuffer.wrap(descriptor).order(ByteOrder.LITTLE_ENDIAN);
                assertThat(fields.getLong(0)).isEqualTo(NativeMemory.address(buffer));
                assertThat(fields.getLong(8)).isEqualTo(256);
                assertThat(fields.get(20)).isEqualTo((byte) (MemoryUsage.READ_SRC.flag() | MemoryUsage.WRITE_DST.flag()));
                assertThat(this.fake.callLog("rpma_mr_reg").get(0).args()[3]).isEqualTo(9);

                try (RpmaRemoteMemoryRegion remote = this.rpma.remoteMemoryRegion(descriptor)) {
                    assertThat(remote.size()).isEqualTo(256);
                    assertThat(remote.flushTypes()).isZero();
                }
                region.advise(0, 64, 1, 0);
            }
            assertThat(peer.openChildren()).isZero();
        }
    }

    @Test
    void registrationArgumentsAreCheckedBeforeANativeCall() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            int before = this.fake.totalCalls();
            assertThatThrownBy(() -> peer.register(ByteBuffer.allocate(8), MemoryUsage.SEND))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("direct ByteBuffer");
            assertThatThrownBy(() -> peer.register(ByteBuffer.allocateDirect(8)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one MemoryUsage");
            assertThatThrownBy(() -> peer.register(0x1000, 0, MemoryUsage.SEND))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one byte");
            assertThat(this.fake.totalCalls()).isEqualTo(before);
            assertThat(peer.openChildren()).isZero();
        }
    }

    @Test
    void registrationFailureCountsNoChild() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            this.fake.failNext("rpma_mr_reg", RpmaError.PROVIDER.code(), Errno.ENOMEM);
            assertThatThrownBy(() -> peer.register(ByteBuffer.allocateDirect(8), MemoryUsage.SEND))
                    .isInstanceOfSatisfying(RpmaException.class, ex -> assertThat(ex.errno()).isEqualTo(Errno.ENOMEM));
            assertThat(peer.openChildren()).isZero();
        }
    }

    /** ibv_reg_mr's ENOMEM is the memory-lock limit: the exception says so and how to raise it. */
    @Test
    void registrationPastTheMemoryLockLimitSaysHowToRaiseIt() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            this.fake.failNext("rpma_mr_reg", RpmaError.PROVIDER.code(), Errno.ENOMEM);
            assertThatThrownBy(() -> peer.register(ByteBuffer.allocateDirect(8), MemoryUsage.SEND))
                    .isInstanceOfSatisfying(RpmaException.class, ex -> {
                        assertThat(RpmaFailureKind.classify(ex)).isSameAs(RpmaFailureKind.MEMORY_LOCK_LIMIT);
                        assertThat(ex.hint()).isEqualTo(RpmaFailureKind.MEMORY_LOCK_LIMIT.hint("198.18.0.1", 0));
                        assertThat(ex.getMessage()).startsWith("rpma_mr_reg() failed with RPMA_E_PROVIDER (-100002):"
                                + " Provider error occurred; errno 12 (ENOMEM). Registering memory would pass")
                                .contains("ulimit -l");
                    });
            this.fake.failNext("rpma_mr_reg", RpmaError.NOMEM);
            assertThatThrownBy(() -> peer.register(ByteBuffer.allocateDirect(8), MemoryUsage.SEND))
                    .as("librpma's own allocation failing is not the limit")
                    .hasMessage("rpma_mr_reg() failed with RPMA_E_NOMEM (-100003): Out of memory");
        }
    }

    /** The region holds its buffer while registered, so the device never reaches freed memory; not after. */
    @Test
    void aRegionKeepsItsBufferReachableUntilDeregistered() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
            WeakReference<ByteBuffer> memory = new WeakReference<>(buffer);
            RpmaMemoryRegion region = peer.register(buffer, MemoryUsage.RECV);
            buffer = null;
            assertThat(collected(memory)).as("registered: still reachable").isFalse();
            region.close();
            assertThat(collected(memory)).as("deregistered: released").isTrue();
            assertThat(peer.openChildren()).isZero();
        }
    }

    /** A region dropped without close() is deregistered by the cleaner before its buffer may go. */
    @Test
    void anUnreachableRegionIsDeregisteredBeforeItsBufferIsFreed() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            WeakReference<ByteBuffer> memory = registerAndDrop(peer);
            assertThat(collected(memory)).as("collected only after the cleaner deregistered it").isTrue();
            assertThat(this.fake.calls("rpma_mr_dereg")).isOne();
            assertThat(this.fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL)).isEmpty();
            assertThat(this.fake.callLog("rpma_mr_dereg").get(0).thread()).isEqualTo("rpma-region-cleaner");
            assertThat(peer.openChildren()).isZero();
        }
    }

    private static WeakReference<ByteBuffer> registerAndDrop(RpmaPeer peer) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
        peer.register(buffer, MemoryUsage.RECV);
        return new WeakReference<>(buffer);
    }

    /** Whether the referent is gone after a bounded number of collections. */
    private static boolean collected(WeakReference<?> reference) {
        for (int i = 0; i < 50 && reference.get() != null; i++) {
            System.gc();
            Thread.onSpinWait();
            try {
                Thread.sleep(20);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return reference.get() == null;
    }

    @Test
    void sharedReceiveQueue() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            try (RpmaSharedReceiveQueue srq = peer.newSharedReceiveQueue(null);
                    RpmaMemoryRegion region = peer.register(ByteBuffer.allocateDirect(64), MemoryUsage.RECV);
                    RpmaConnectionConfig config = this.rpma.newConnectionConfig()) {
                assertThat(srq.receiveCompletionQueue()).as("default rcq size 20").isNotNull();
                srq.receive(region, 0, 64, 5);
                assertThat(srq.receiveCompletionQueue().poll(new RpmaCompletions(1))).isZero();
                assertThat(config.hasSharedReceiveQueue()).isFalse();
                config.sharedReceiveQueue(srq);
                assertThat(config.hasSharedReceiveQueue()).isTrue();
                config.sharedReceiveQueue(null);
                assertThat(config.hasSharedReceiveQueue()).isFalse();
                assertThat(peer.openChildren()).isEqualTo(2);
            }
            try (RpmaSrqConfig config = this.rpma.newSrqConfig().rcqSize(0);
                    RpmaSharedReceiveQueue srq = peer.newSharedReceiveQueue(config)) {
                assertThat(srq.receiveCompletionQueue()).isNull();
            }
            this.fake.failNext("rpma_srq_get_rcq", RpmaError.INVAL);
            assertThatThrownBy(() -> peer.newSharedReceiveQueue(null)).isInstanceOf(RpmaException.class);
            assertThat(this.fake.liveHandles(FakeLibRpma.Kind.SRQ)).as("deleted after the failure").isEmpty();
            assertThat(peer.openChildren()).isZero();
        }
    }

    @Test
    void errnoOfAFailedQueueIsReadBeforeTheCleanUpCall() {
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            this.fake.failNext("rpma_srq_get_rcq", RpmaError.PROVIDER.code(), Errno.EIO);
            assertThatThrownBy(() -> peer.newSharedReceiveQueue(null)).isInstanceOfSatisfying(RpmaException.class, ex -> {
                assertThat(ex.function()).isEqualTo("rpma_srq_get_rcq");
                assertThat(ex.errno()).as("not the errno of rpma_srq_delete that cleaned up").isEqualTo(Errno.EIO);
            });
            assertThat(this.fake.calls("rpma_srq_delete")).isOne();
        }
    }

    @Test
    void notThreadSafeCallsAreSerializedPerPeer() throws Exception {
        this.fake.notThreadSafeDwell(java.time.Duration.ofMillis(2));
        try (RpmaPeer peer = this.rpma.openPeer("198.18.0.1", PeerRole.SERVER)) {
            java.util.List<Thread> threads = new java.util.ArrayList<>();
            java.util.Queue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
            for (int t = 0; t < 4; t++) {
                Thread thread = new Thread(() -> {
                    try {
                        for (int i = 0; i < 20; i++) {
                            peer.register(ByteBuffer.allocateDirect(8), MemoryUsage.SEND).close();
                            peer.newSharedReceiveQueue(null).close();
                        }
                    }
                    catch (Throwable ex) {
                        failures.add(ex);
                    }
                }, "registrar-" + t);
                threads.add(thread);
                thread.start();
            }
            for (Thread thread : threads) {
                thread.join(20_000);
            }
            assertThat(failures).isEmpty();
            assertThat(this.fake.calls("rpma_mr_reg")).isEqualTo(80);
            assertThat(this.fake.calls("rpma_srq_delete")).isEqualTo(80);
        }
    }
}
