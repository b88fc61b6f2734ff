package dev.rpma.jna.testing;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import com.sun.jna.Memory;

import dev.rpma.jna.RpmaConnectionEvent;

/**
 * The script of one connection of a {@link FakeLibRpma}: the events {@code rpma_conn_next_event}
 * returns, the private data, its completion queues, and what was done with it. Thread-safe.
 *
 * <p>The event fd ({@code rpma_conn_get_event_fd}, a real eventfd) is readable while events are
 * queued; with none queued, {@code rpma_conn_next_event} returns {@code RPMA_E_PROVIDER} with errno
 * {@code EAGAIN}. The first {@code rpma_conn_disconnect} queues {@link RpmaConnectionEvent#CLOSED}
 * (as RDMA CM reports DISCONNECTED to the side that disconnects), unless
 * {@link FakeLibRpma#closedOnDisconnect(boolean)} turned that off.
 */
public final class FakeConnection {

    private final FakeLibRpma fake;

    private final FakeRequest request;

    /** Integer event codes and {@link FakeLibRpma.Failure}s. */
    final ArrayDeque<Object> events = new ArrayDeque<>();

    final List<PostedOperation> posted = new ArrayList<>();

    final int qpNumber;

    long handle;

    FakeEventFd eventFd;

    FakeEventFd completionFd;

    byte[] privateData;

    Memory privateDataMemory;

    FakeCompletionQueue cq;

    FakeCompletionQueue rcq;

    FakeLibRpma.ConnCfg config;

    int disconnects;

    String deletedOn;

    FakeConnection(FakeLibRpma fake, FakeRequest request, int qpNumber) {
        this.fake = fake;
        this.request = request;
        this.qpNumber = qpNumber;
    }

    /** The request it was made from. */
    public FakeRequest request() {
        return this.request;
    }

    /** The fake {@code struct rpma_conn *}. */
    public long handle() {
        synchronized (this.fake.lock) {
            return this.handle;
        }
    }

    /** The event fd; -1 once deleted. */
    public int eventFd() {
        synchronized (this.fake.lock) {
            return this.eventFd.isOpen() ? this.eventFd.fd() : -1;
        }
    }

    public int qpNumber() {
        return this.qpNumber;
    }

    /** Queues an event for {@code rpma_conn_next_event}. */
    public FakeConnection queueEvent(RpmaConnectionEvent event) {
        return queueEventCode(event.code());
    }

    /** Queues any {@code enum rpma_conn_event} value, including ones librpma never returns. */
    public FakeConnection queueEventCode(int code) {
        synchronized (this.fake.lock) {
            this.events.add(code);
            signal();
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /** Makes a later {@code rpma_conn_next_event} fail, e.g. {@code RPMA_E_UNKNOWN} for an unmapped event. */
    public FakeConnection queueEventFailure(int returnCode, int errno) {
        synchronized (this.fake.lock) {
            this.events.add(new FakeLibRpma.Failure(returnCode, errno));
            signal();
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /** Events not yet returned. */
    public int pendingEvents() {
        synchronized (this.fake.lock) {
            return this.events.size();
        }
    }

    /** What {@code rpma_conn_get_private_data} returns: the request's private data unless set otherwise. */
    public byte[] privateData() {
        synchronized (this.fake.lock) {
            return this.privateData.clone();
        }
    }

    /** Sets what {@code rpma_conn_get_private_data} returns (a client sees the server's accept data). */
    public FakeConnection privateData(byte[] privateData) {
        synchronized (this.fake.lock) {
            this.privateData = privateData.clone();
            this.privateDataMemory = null;
        }
        return this;
    }

    /** The main completion queue. */
    public FakeCompletionQueue completionQueue() {
        return this.cq;
    }

    /** The receive completion queue, {@code null} when the configuration's rcq size was 0. */
    public FakeCompletionQueue receiveCompletionQueue() {
        return this.rcq;
    }

    /** The configuration values it was made with. */
    public FakeLibRpma.ConnectionConfigValues config() {
        synchronized (this.fake.lock) {
            return this.config.values();
        }
    }

    /** How many times {@code rpma_conn_disconnect} was called. */
    public int disconnects() {
        synchronized (this.fake.lock) {
            return this.disconnects;
        }
    }

    public boolean isDeleted() {
        synchronized (this.fake.lock) {
            return this.deletedOn != null;
        }
    }

    /** Name of the thread that called {@code rpma_conn_delete}, or {@code null}. */
    public String deletedOnThread() {
        synchronized (this.fake.lock) {
            return this.deletedOn;
        }
    }

    /** Operations posted on it ({@code rpma_send}, {@code rpma_recv}, {@code rpma_read}, ...), in order. */
    public List<PostedOperation> posted() {
        synchronized (this.fake.lock) {
            return List.copyOf(this.posted);
        }
    }

    public boolean awaitDeleted(Duration timeout) {
        return this.fake.await(timeout, () -> this.deletedOn != null);
    }

    public boolean awaitDisconnected(Duration timeout) {
        return this.fake.await(timeout, () -> this.disconnects > 0);
    }

    /** Waits until every queued event was returned. */
    public boolean awaitEventsDrained(Duration timeout) {
        return this.fake.await(timeout, this.events::isEmpty);
    }

    void signal() {
        if (this.eventFd != null) {
            this.eventFd.readable(!this.events.isEmpty());
        }
    }

    @Override
    public String toString() {
        return "FakeConnection[qp " + this.qpNumber + (isDeleted() ? ", deleted]" : "]");
    }
}
