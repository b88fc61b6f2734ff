package dev.rpma.spring.boot.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;

/**
 * The in-JVM loopback that the application's endpoints and RDMA clients run on under
 * {@link AutoConfigureRpmaLoopback} or {@link RpmaTest}: a client reaches the endpoint listening on the
 * port it dials, whatever address either names, and the two move real bytes between their registered
 * memory, through the completion queues and event fds the event loops wait on. It keeps librpma's
 * error codes and checks its rules (not-thread-safe calls on their owning thread, use after free):
 * {@link #assertNoViolations()} fails a test whose code broke one. What it models, and where a device
 * behaves differently, is in the project's docs/testing.md.
 *
 * <p>Inject it into a test to break things on purpose: {@link #rejectNextConnection(int)},
 * {@link #unreachableNext(int)}, and per connection ({@link #connections()}) a loss, a completion with
 * an error status, or a slow side; {@link #nativeLayer()} fails any librpma call once
 * ({@code failNext("rpma_send", ...)}).
 */
public final class RpmaLoopback implements AutoCloseable {

    private final FakeLibRpma nativeLayer = FakeLibRpma.loopback();

    private final Rpma rpma = Rpma.using(this.nativeLayer);

    /** The librpma the application's server and clients use. */
    public Rpma rpma() {
        return this.rpma;
    }

    /** The loopback's native layer: per-call faults ({@code failNext}, {@code stallNext}) and what was called. */
    public FakeLibRpma nativeLayer() {
        return this.nativeLayer;
    }

    /** The next client connection to {@code port} is rejected before the server sees it (the client gets REJECTED). */
    public RpmaLoopback rejectNextConnection(int port) {
        this.nativeLayer.rejectNext(port);
        return this;
    }

    /** The next client connection to {@code port} ends in {@code RPMA_CONN_UNREACHABLE}. */
    public RpmaLoopback unreachableNext(int port) {
        this.nativeLayer.unreachableNext(port);
        return this;
    }

    /** The connections the application's endpoints accepted from clients of this JVM, oldest first. */
    public List<RpmaLoopbackConnection> connections() {
        List<RpmaLoopbackConnection> accepted = new ArrayList<>();
        for (FakeConnection connection : this.nativeLayer.connections()) {
            if (connection.request().isServerSide() && connection.peer() != null) {
                accepted.add(new RpmaLoopbackConnection(connection));
            }
        }
        return accepted;
    }

    /** Waits until the endpoint on {@code port} has accepted {@code count} connections, and returns the newest. */
    public RpmaLoopbackConnection awaitConnection(int port, int count, Duration timeout) {
        boolean there = this.nativeLayer.await(timeout, () -> onPort(port).size() >= count);
        List<RpmaLoopbackConnection> onPort = onPort(port);
        if (!there) {
            throw new AssertionError("The endpoint on port " + port + " accepted " + onPort.size() + " connection(s) in "
                    + timeout + ", not " + count);
        }
        return onPort.get(onPort.size() - 1);
    }

    private List<RpmaLoopbackConnection> onPort(int port) {
        return connections().stream().filter(connection -> connection.port() == port).toList();
    }

    /** Fails when the application broke a rule of librpma (a wrong thread, a freed object, a queue overrun...). */
    public void assertNoViolations() {
        this.nativeLayer.assertNoViolations();
    }

    @Override
    public void close() {
        this.nativeLayer.close();
    }
}
