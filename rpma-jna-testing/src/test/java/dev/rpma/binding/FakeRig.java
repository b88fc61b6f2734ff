package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;

/**
 * A peer and a listening endpoint over a {@link FakeLibRpma}, and everything a test makes on them;
 * {@link #close()} closes what is still open (children first) and asserts that the fake saw no
 * violation and that every librpma object was freed.
 */
final class FakeRig implements AutoCloseable {

    static final String ADDRESS = "198.18.0.1";

    static final int PORT = 7204;

    final FakeLibRpma fake = new FakeLibRpma();

    final Rpma rpma = Rpma.using(this.fake);

    final RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);

    final RpmaEndpoint endpoint = this.peer.listen(ADDRESS, PORT);

    final FakeEndpoint script = this.fake.endpointAt(ADDRESS, PORT);

    private final List<AutoCloseable> opened = new ArrayList<>();

    <T extends AutoCloseable> T track(T closeable) {
        this.opened.add(closeable);
        return closeable;
    }

    /** A request carrying {@code privateData}, obtained from the endpoint. */
    RpmaConnectionRequest request(byte[] privateData) {
        this.script.queueRequest(privateData);
        RpmaConnectionRequest request = this.endpoint.nextConnectionRequest();
        assertThat(request).isNotNull();
        return track(request);
    }

    /** An accepted connection. */
    RpmaConnection connection() {
        return track(request(new byte[] { 7 }).connect());
    }

    RpmaMemoryRegion region(int size, MemoryUsage... usages) {
        return track(this.peer.register(ByteBuffer.allocateDirect(size), usages));
    }

    RpmaRemoteMemoryRegion remoteRegion() {
        ByteBuffer descriptor = ByteBuffer.allocate(RpmaMemoryRegion.DESCRIPTOR_SIZE).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        descriptor.putLong(0x10_0000L).putLong(4096).putInt(0x77).put((byte) (MemoryUsage.WRITE_DST.flag()
                | MemoryUsage.READ_SRC.flag() | MemoryUsage.FLUSH_TYPE_VISIBILITY.flag()));
        return track(this.rpma.remoteMemoryRegion(descriptor.array()));
    }

    /** Runs {@code action} on a new thread named {@code name}; returns what it threw, or {@code null}. */
    static Throwable onThread(String name, ThrowingRunnable action) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread thread = new Thread(() -> {
            try {
                action.run();
            }
            catch (Throwable ex) {
                thrown.set(ex);
            }
        }, name);
        thread.start();
        thread.join(10_000);
        assertThat(thread.isAlive()).as("thread '%s' finished", name).isFalse();
        return thrown.get();
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Closes what the test tracked, newest first, except requests the calling thread may not reject. */
    void closeTracked() throws Exception {
        for (int i = this.opened.size() - 1; i >= 0; i--) {
            AutoCloseable closeable = this.opened.get(i);
            if (closeable instanceof RpmaConnectionRequest request && !request.isOwnedByCurrentThread()) {
                continue;
            }
            closeable.close();
        }
    }

    @Override
    public void close() {
        try {
            closeTracked();
            if (this.endpoint.isOwnedByCurrentThread()) {
                this.endpoint.close();
            }
            this.peer.close();
            this.fake.assertNoViolations();
            this.fake.assertAllFreed();
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
        finally {
            this.fake.close();
        }
    }
}
