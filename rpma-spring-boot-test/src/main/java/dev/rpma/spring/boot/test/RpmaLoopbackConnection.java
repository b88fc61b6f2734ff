package dev.rpma.spring.boot.test;

import java.time.Duration;

import dev.rpma.binding.testing.FakeConnection;

/**
 * One connection of the {@link RpmaLoopback}: the server's side, accepted by an endpoint of the
 * application, and the client's side that dialled it. Its faults act as a device or a peer would:
 * the application sees them through its events and completions only.
 */
public final class RpmaLoopbackConnection {

    private final FakeConnection server;

    RpmaLoopbackConnection(FakeConnection server) {
        this.server = server;
    }

    /** The port of the endpoint that accepted it. */
    public int port() {
        return this.server.request().endpoint().port();
    }

    /** The private data the client connected with. */
    public byte[] clientPrivateData() {
        return this.server.request().privateData();
    }

    /** Whether neither side was deleted yet. */
    public boolean isOpen() {
        FakeConnection client = this.server.peer();
        return !this.server.isDeleted() && client != null && !client.isDeleted();
    }

    /** The connection is lost: both sides get {@code RPMA_CONN_LOST} and their queue pairs fail. */
    public RpmaLoopbackConnection lose() {
        this.server.lose();
        return this;
    }

    /**
     * The server's next send or one-sided operation completes with {@code status} ({@code enum ibv_wc_status},
     * e.g. 12 for {@code IBV_WC_RETRY_EXC_ERR}); both queue pairs fail.
     */
    public RpmaLoopbackConnection failNextServerCompletion(int status) {
        this.server.failNextCompletion(status);
        return this;
    }

    /** The client's next send or one-sided operation completes with {@code status}; both queue pairs fail. */
    public RpmaLoopbackConnection failNextClientCompletion(int status) {
        this.server.peer().failNextCompletion(status);
        return this;
    }

    /** The server's messages reach the client {@code delay} after they are sent: a slow server. */
    public RpmaLoopbackConnection slowServer(Duration delay) {
        this.server.delay(delay);
        return this;
    }

    /** The client's messages reach the server {@code delay} after they are sent: a slow client. */
    public RpmaLoopbackConnection slowClient(Duration delay) {
        this.server.peer().delay(delay);
        return this;
    }

    @Override
    public String toString() {
        return "RpmaLoopbackConnection[port " + port() + (isOpen() ? "" : ", closed") + "]";
    }
}
