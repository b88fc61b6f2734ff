package dev.rpma.binding.testing;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;

/**
 * The script of one listening endpoint of a {@link FakeLibRpma}: what {@code rpma_ep_next_conn_req}
 * returns, in order, and what happened to it. Obtain it with {@link FakeLibRpma#endpointAt} (before or
 * after {@code rpma_ep_listen}) or {@link FakeLibRpma#awaitEndpoint}. Thread-safe.
 *
 * <p>While results are queued, the endpoint's fd ({@code rpma_ep_get_fd}, a real eventfd) is
 * readable; once the queue is empty it is drained, and {@code rpma_ep_next_conn_req} returns
 * {@code RPMA_E_PROVIDER} with errno {@code EAGAIN}, as librpma does on a non-blocking fd.
 */
public final class FakeEndpoint extends FakeObject {

    private final String address;

    private final int port;

    /** {@link FakeRequest}s and {@link FakeLibRpma.Failure}s, in the order they will be returned. */
    final ArrayDeque<Object> script = new ArrayDeque<>();

    final List<FakeRequest> obtained = new ArrayList<>();

    /** What every {@code rpma_ep_next_conn_req} returns while set ({@link #failEveryLook}). */
    FakeLibRpma.Failure failingEveryLook;

    /** Accepts of requests from this endpoint inside {@code rpma_conn_req_connect} now. */
    final AtomicInteger acceptsInProgress = new AtomicInteger();

    /** The thread inside {@code rpma_ep_next_conn_req} on this endpoint now, or {@code null}. */
    volatile Thread nextConnReqThread;

    long peer;

    FakeEventFd fd;

    Thread owner;

    String listenedOn;

    String shutDownOn;

    /** Its device was removed ({@link FakeLibRpma#removeDevice}): nothing more arrives on it. */
    boolean deviceRemoved;

    FakeEndpoint(FakeLibRpma fake, String address, int port) {
        super(fake);
        this.address = address;
        this.port = port;
    }

    public String address() {
        return this.address;
    }

    public int port() {
        return this.port;
    }

    /** The endpoint's fd, -1 before listen and after shutdown. */
    public int fd() {
        synchronized (this.fake.lock) {
            return FakeEventFd.numberOf(this.fd);
        }
    }

    public boolean isListening() {
        synchronized (this.fake.lock) {
            return this.handle != 0 && this.shutDownOn == null;
        }
    }

    public boolean isShutDown() {
        synchronized (this.fake.lock) {
            return this.shutDownOn != null;
        }
    }

    /** Whether the device of its peer was removed ({@link FakeLibRpma#removeDevice}) while it listened. */
    public boolean isDeviceRemoved() {
        synchronized (this.fake.lock) {
            return this.deviceRemoved;
        }
    }

    /** Name of the thread that called {@code rpma_ep_shutdown}, or {@code null}. */
    public String shutDownOnThread() {
        synchronized (this.fake.lock) {
            return this.shutDownOn;
        }
    }

    /** The peer it listens on (the one its requests' queue pairs are created on); 0 before the listen. */
    public long peer() {
        synchronized (this.fake.lock) {
            return this.peer;
        }
    }

    /** Name of the thread that called {@code rpma_ep_listen}, or {@code null}. */
    public String listenedOnThread() {
        synchronized (this.fake.lock) {
            return this.listenedOn;
        }
    }

    /**
     * The thread allowed to call {@code rpma_ep_next_conn_req}, {@code rpma_ep_shutdown} and
     * {@code rpma_conn_req_delete} (of this endpoint's requests): the one set by {@link #owner(Thread)},
     * else the first that called {@code rpma_ep_next_conn_req}; {@code null} until then.
     */
    public Thread owner() {
        synchronized (this.fake.lock) {
            return this.owner;
        }
    }

    /** Makes {@code owner} the only thread allowed to call the endpoint's not-thread-safe functions. */
    public FakeEndpoint owner(Thread owner) {
        synchronized (this.fake.lock) {
            this.owner = owner;
        }
        return this;
    }

    /**
     * Queues a connection request carrying {@code privateData} (at most 255 bytes; empty for none). An
     * acceptor may take it at once: script what it does with {@link #queueRequest(byte[], java.util.function.Consumer)}.
     */
    public FakeRequest queueRequest(byte[] privateData) {
        FakeRequest request = newRequest(privateData);
        queue(request);
        return request;
    }

    /**
     * Queues a connection request carrying {@code privateData}, scripted by {@code script} (e.g.
     * {@code request -> request.failConnect(...)}) before it is queued: scripting it after
     * {@link #queueRequest(byte[])} races with an acceptor that takes and connects it at once.
     */
    public FakeRequest queueRequest(byte[] privateData, java.util.function.Consumer<FakeRequest> script) {
        FakeRequest request = newRequest(privateData);
        script.accept(request);
        queue(request);
        return request;
    }

    /**
     * Queues a connection request whose readiness librdmacm swallowed: the fd does not turn readable
     * for it, so only a look at the endpoint without {@code POLLIN} finds it.
     */
    public FakeRequest queueRequestWithoutReadiness(byte[] privateData) {
        FakeRequest request = newRequest(privateData);
        queue(request, false);
        return request;
    }

    private FakeRequest newRequest(byte[] privateData) {
        if (privateData.length > 255) {
            throw new IllegalArgumentException("librpma's private data is at most 255 bytes, got " + privateData.length);
        }
        return new FakeRequest(this.fake, this, privateData.clone(), null, null);
    }

    /** Queues {@code RPMA_E_NO_EVENT} (errno {@code ENODATA}). */
    public FakeEndpoint queueNoEvent() {
        return queueFailure(RpmaError.NO_EVENT.code(), Errno.ENODATA);
    }

    /** Queues {@code RPMA_E_PROVIDER} with {@code errno} ({@code EAGAIN}, {@code EINTR}, {@code EBADF}, ...). */
    public FakeEndpoint queueProviderError(int errno) {
        return queueFailure(RpmaError.PROVIDER.code(), errno);
    }

    /** Queues {@code RPMA_E_INVAL}: an event other than a connection request, acked and dropped. */
    public FakeEndpoint queueUnexpectedEvent() {
        return queueFailure(RpmaError.INVAL.code(), 0);
    }

    /** Queues {@code RPMA_E_NOMEM}. */
    public FakeEndpoint queueOutOfMemory() {
        return queueFailure(RpmaError.NOMEM.code(), Errno.ENOMEM);
    }

    /**
     * Makes every {@code rpma_ep_next_conn_req} fail with {@code returnCode} and {@code errno} until
     * {@link #stopFailing()}, the queued results waiting meanwhile: a shortage that lasts (the file
     * descriptor limit reached, locked memory used up) rather than one failure.
     */
    public FakeEndpoint failEveryLook(int returnCode, int errno) {
        if (returnCode == 0) {
            throw new IllegalArgumentException("A failure needs a non-zero return code");
        }
        synchronized (this.fake.lock) {
            this.failingEveryLook = new FakeLibRpma.Failure(returnCode, errno);
        }
        return this;
    }

    /** Ends {@link #failEveryLook}: the queued results are returned again. */
    public FakeEndpoint stopFailing() {
        synchronized (this.fake.lock) {
            this.failingEveryLook = null;
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /** Queues any failure. */
    public FakeEndpoint queueFailure(int returnCode, int errno) {
        if (returnCode == 0) {
            throw new IllegalArgumentException("Queue a success with queueRequest(privateData)");
        }
        queue(new FakeLibRpma.Failure(returnCode, errno));
        return this;
    }

    private void queue(Object result) {
        queue(result, true);
    }

    private void queue(Object result, boolean readable) {
        synchronized (this.fake.lock) {
            if (this.deviceRemoved) {
                throw new IllegalStateException(this + " lost its device: nothing arrives on it any more");
            }
            this.script.add(result);
            if (readable) {
                signal();
            }
            this.fake.lock.notifyAll();
        }
    }

    /** How many scripted results {@code rpma_ep_next_conn_req} has not returned yet. */
    public int pending() {
        synchronized (this.fake.lock) {
            return this.script.size();
        }
    }

    /** Requests {@code rpma_ep_next_conn_req} handed out, in order. */
    public List<FakeRequest> obtainedRequests() {
        synchronized (this.fake.lock) {
            return List.copyOf(this.obtained);
        }
    }

    /** Waits until every scripted result was returned. */
    public boolean awaitDrained(Duration timeout) {
        return this.fake.await(timeout, this.script::isEmpty);
    }

    /** Waits until {@code rpma_ep_shutdown} was called. */
    public boolean awaitShutDown(Duration timeout) {
        return this.fake.await(timeout, () -> this.shutDownOn != null);
    }

    /**
     * Under the fake's lock: the device went. The requests not handed out go with it (their clients, in a
     * loopback, are rejected), and the one event left is the removal, which librpma reports as
     * {@code RPMA_E_INVAL}.
     */
    void deviceRemoved() {
        Loopback.shutDown(this);
        this.script.clear();
        this.failingEveryLook = null;
        this.deviceRemoved = true;
        this.script.add(new FakeLibRpma.Failure(RpmaError.INVAL.code(), 0));
        signal();
    }

    /** Makes the fd readable exactly while results are queued; under the fake's lock. */
    void signal() {
        if (this.fd != null) {
            this.fd.readable(!this.script.isEmpty());
        }
    }

    @Override
    public String toString() {
        return "FakeEndpoint[" + this.address + ":" + this.port + "]";
    }
}
