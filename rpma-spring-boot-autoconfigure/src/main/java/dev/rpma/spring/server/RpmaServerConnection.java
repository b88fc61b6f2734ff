package dev.rpma.spring.server;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.rpma.jna.RpmaConnection;
import dev.rpma.jna.RpmaConnectionEvent;

/**
 * An accepted connection, tracked by its endpoint: the endpoint's event loop reads its events,
 * and on CLOSED or LOST disconnects it and deletes it once its handler has returned. Use
 * {@link #connection()} for the data path from the handler; wait for
 * {@link #awaitEstablished(Duration)} first. Thread-safe.
 */
public final class RpmaServerConnection {

    private final RpmaConnection connection;

    private final String endpointName;

    private final byte[] privateData;

    private final CountDownLatch settled = new CountDownLatch(1);

    private final CountDownLatch closed = new CountDownLatch(1);

    /** Handler invocations still using the connection; it is deleted only when none is. */
    final AtomicInteger borrowers = new AtomicInteger(1);

    private volatile RpmaConnectionEvent lastEvent;

    // owned by the event loop
    int eventFd = -1;

    boolean deleteWhenReturned;

    boolean deleted;

    RpmaServerConnection(RpmaConnection connection, String endpointName, byte[] privateData) {
        this.connection = connection;
        this.endpointName = endpointName;
        this.privateData = privateData;
    }

    /** The librpma connection, for the data path. */
    public RpmaConnection connection() {
        return this.connection;
    }

    public String endpointName() {
        return this.endpointName;
    }

    /** The private data of the request this connection came from (a copy). */
    public byte[] privateData() {
        // not clone(): C1, which the VM scripts run, calls into the VM for it (1.6 % of a connection's CPU there)
        return Arrays.copyOf(this.privateData, this.privateData.length);
    }

    /** The last event seen, or {@code null} before the first. */
    public RpmaConnectionEvent lastEvent() {
        return this.lastEvent;
    }

    public boolean isEstablished() {
        return this.lastEvent == RpmaConnectionEvent.ESTABLISHED;
    }

    /** Whether it was closed or lost. */
    public boolean isClosed() {
        return this.closed.getCount() == 0;
    }

    /**
     * Waits until the connection is established.
     *
     * @return {@code true} once ESTABLISHED; {@code false} if it closed or was lost first, or on timeout
     */
    public boolean awaitEstablished(Duration timeout) throws InterruptedException {
        this.settled.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        return isEstablished();
    }

    /** Waits until the connection is closed or lost; {@code false} on timeout. */
    public boolean awaitClosed(Duration timeout) throws InterruptedException {
        return this.closed.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Starts disconnecting ({@code rpma_conn_disconnect}); the endpoint deletes it after CLOSED. Any thread. */
    public void disconnect() {
        this.connection.disconnect();
    }

    void onEvent(RpmaConnectionEvent event) {
        if (isClosed()) {
            return;
        }
        this.lastEvent = event;
        if (event != RpmaConnectionEvent.ESTABLISHED) {
            this.closed.countDown();
        }
        this.settled.countDown();
    }

    @Override
    public String toString() {
        return "RpmaServerConnection[" + this.endpointName + ", " + this.lastEvent + "]";
    }
}
