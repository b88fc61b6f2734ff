package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.rpma.binding.Errno;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.FakeCall;
import dev.rpma.binding.testing.FakeRequest;

/**
 * Regions on files and (claimed) persistent memory in a server over the fake: registered with
 * their usages (and READ_DST with WRITE_DST), accepted with {@code struct common_data} carrying the
 * region's and the peer configuration's descriptors as librpma's example 05 does, deregistered after
 * the last connection and before the peer, and a file region's content found again by the next
 * server.
 */
class PersistentRegionTest {

    @TempDir
    Path dir;

    private ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.close();
    }

    private static byte usageFlags(MemoryUsage... usages) {
        int flags = 0;
        for (MemoryUsage usage : usages) {
            flags |= usage.flag();
        }
        return (byte) flags;
    }

    @Test
    void aFileRegionIsAcceptedWithItsDescriptorAndAPeerConfigurationWithoutDirectWriteToPmem() {
        RpmaBackingStore store = RpmaBackingStore.mapFile(this.dir.resolve("log"), 4096, true);
        this.harness.regions.add(new RpmaRegionDefinition("log", store,
                EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.READ_SRC, MemoryUsage.FLUSH_TYPE_VISIBILITY), Set.of(), false));
        this.harness.start((request) -> request.connect(request.commonData("log", 17).encode()));
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);

        byte[] privateData = request.connectPrivateData();
        assertThat(privateData).hasSize(RpmaCommonData.SIZE);
        RpmaCommonData data = RpmaCommonData.decode(privateData);
        assertThat(data.dataOffset()).isEqualTo(17);
        ByteBuffer descriptor = ByteBuffer.wrap(data.memoryRegionDescriptor()).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(descriptor.getLong(0)).as("the mapping's address").isEqualTo(NativeMemory.address(store.memory()));
        assertThat(descriptor.getLong(8)).isEqualTo(4096);
        assertThat(descriptor.get(20)).as("the declared usages, and READ_DST with WRITE_DST for the server's reads")
            .isEqualTo(usageFlags(MemoryUsage.WRITE_DST, MemoryUsage.READ_SRC, MemoryUsage.FLUSH_TYPE_VISIBILITY,
                    MemoryUsage.READ_DST));
        assertThat(data.peerConfigDescriptor()).as("rpma_peer_cfg_get_descriptor: direct write to PMem off")
            .containsExactly(0);
        assertThat(this.harness.fake.calls("rpma_peer_cfg_new")).isOne();
        assertThat(this.harness.fake.calls("rpma_peer_cfg_delete")).as("only its descriptor is kept").isOne();
    }

    @Test
    void persistentMemoryDeclaresDirectWriteToPmemAndPersistentFlushes() {
        RpmaBackingStore pmem = RpmaBackingStore.assumedPersistentForTests(NativeMemory.allocate(1024), this.dir.resolve("pmem"));
        this.harness.regions.add(new RpmaRegionDefinition("pmem", pmem, EnumSet.of(MemoryUsage.WRITE_DST,
                MemoryUsage.FLUSH_TYPE_VISIBILITY, MemoryUsage.FLUSH_TYPE_PERSISTENT), Set.of(), true));
        this.harness.start((request) -> request.connect(request.commonData("pmem").encode()));
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);

        RpmaCommonData data = RpmaCommonData.decode(request.connectPrivateData());
        assertThat(data.memoryRegionDescriptor()[20]).isEqualTo(usageFlags(MemoryUsage.WRITE_DST,
                MemoryUsage.FLUSH_TYPE_VISIBILITY, MemoryUsage.FLUSH_TYPE_PERSISTENT, MemoryUsage.READ_DST));
        assertThat(data.peerConfigDescriptor()).containsExactly(1);
    }

    @Test
    void persistentMemoryTheDeviceCannotRegisterFailsTheListenSayingWhy() {
        Path path = this.dir.resolve("pmem");
        RpmaBackingStore pmem = RpmaBackingStore.assumedPersistentForTests(NativeMemory.allocate(1024), path);
        this.harness.regions.add(new RpmaRegionDefinition("pmem", pmem, EnumSet.of(MemoryUsage.WRITE_DST,
                MemoryUsage.FLUSH_TYPE_PERSISTENT), Set.of(), true));
        this.harness.fake.failNext("rpma_mr_reg", RpmaError.PROVIDER.code(), Errno.EOPNOTSUPP);
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .isInstanceOfSatisfying(RpmaRegionStoreException.class, (ex) -> {
                assertThat(ex.path()).isEqualTo(path);
                assertThat(ex.getMessage()).contains("cannot register file system DAX memory", "EOPNOTSUPP",
                        "on-demand paging");
            });
        this.harness.fake.assertAllFreed();
        this.harness.server = null;
    }

    @Test
    void aDataOffsetOutsideTheRegionOrARegionNotServingTheEndpointIsRefused() {
        this.harness.regions.add(new RpmaRegionDefinition("small", NativeMemory.allocate(8),
                EnumSet.of(MemoryUsage.WRITE_DST), Set.of()));
        this.harness.start((request) -> {
            try {
                request.commonData("small", 8);
            }
            finally {
                request.reject();
            }
        });
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isOne();
    }

    @Test
    void aFileRegionIsDeregisteredAfterTheLastConnectionAndTheNextServerFindsItsContent() throws IOException {
        Path file = this.dir.resolve("log");
        RpmaBackingStore store = RpmaBackingStore.mapFile(file, 4096, true);
        this.harness.regions.add(new RpmaRegionDefinition("log", store,
                EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY), Set.of(), false));
        this.harness.messageHandlers.put("", (message, session) -> message);
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.connectOne();
        // what a client's rpma_write would leave in the region
        store.memory().put(100, "written remotely".getBytes());
        assertThat(this.harness.server.regions().makeDurable("log", 100, 16)).isTrue();
        this.harness.stop();

        List<FakeCall> calls = this.harness.fake.callLog();
        long lastDelete = last(calls, "rpma_conn_delete");
        long peerDelete = last(calls, "rpma_peer_delete");
        assertThat(calls.stream().filter((call) -> call.function().equals("rpma_mr_dereg")))
            .as("the region and the slots' chunk").hasSize(3)
            .allSatisfy((call) -> assertThat(call.sequence()).isBetween(lastDelete, peerDelete));
        this.harness.fake.assertNoViolations();
        this.harness.fake.assertAllFreed();
        this.harness.close();

        this.harness = new ServerHarness();
        RpmaBackingStore reopened = RpmaBackingStore.mapFile(file, 4096, false);
        this.harness.regions.add(new RpmaRegionDefinition("log", reopened,
                EnumSet.of(MemoryUsage.READ_SRC), Set.of(), false));
        this.harness.start(RpmaIncomingRequest::connect);
        byte[] read = new byte[16];
        this.harness.server.regions().memory("log").get(100, read);
        assertThat(new String(read)).isEqualTo("written remotely");
        assertThat(Files.size(file)).isEqualTo(4096);
    }

    @Test
    void processMemoryCannotBeMadeDurableAndSaysSo() {
        this.harness.regions.add(RpmaRegionDefinition.readOnly("greeting", NativeMemory.allocate(8)));
        this.harness.start(RpmaIncomingRequest::connect);
        RpmaRegions regions = this.harness.server.regions();
        assertThat(regions.makeDurable("greeting", 0, 8)).isFalse();
        assertThatThrownBy(() -> regions.makeDurable("greeting", 4, 8)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> regions.makeDurable("other", 0, 1)).hasMessageContaining("No region is named 'other'");
    }

    private static long last(List<FakeCall> calls, String function) {
        return calls.stream().filter((call) -> call.function().equals(function)).mapToLong(FakeCall::sequence).max()
            .orElseThrow();
    }
}
