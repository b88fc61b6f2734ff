package dev.rpma.benchmarks.dispatch;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Timestamps of one run: when {@code rpma_ep_next_conn_req} returned the i-th request, and when the
 * handler was invoked for it. Requests carry their sequence number in their private data; the fake
 * hands them out in the order they were queued, so the i-th return is request i.
 *
 * <p>{@link #returned()} is called by the one thread that calls {@code rpma_ep_next_conn_req};
 * {@link #invoked(long, byte[])} and {@link #done()} by handler threads. The executor hand-off orders a
 * return before its invocation, and {@link #handled()} orders every invocation before the reader.
 */
final class DispatchRecorder {

    private final long[] returnedAt;

    private final long[] invokedAt;

    private int returned;

    private final AtomicInteger handled = new AtomicInteger();

    /** Opens when every request was handled: the measuring thread waits on it instead of polling beside the server. */
    private final CountDownLatch allHandled = new CountDownLatch(1);

    DispatchRecorder(int requests) {
        this.returnedAt = new long[requests];
        this.invokedAt = new long[requests];
    }

    /** {@code rpma_ep_next_conn_req} just returned a request. */
    void returned() {
        this.returnedAt[this.returned++] = System.nanoTime();
    }

    /** A handler was invoked at {@code now} (its first statement) for the request with this private data. */
    void invoked(long now, byte[] privateData) {
        this.invokedAt[sequenceOf(privateData)] = now;
    }

    /** Last thing a handler does, after its decision. */
    void done() {
        if (this.handled.incrementAndGet() == this.returnedAt.length) {
            this.allHandled.countDown();
        }
    }

    /** Waits until every request was handled or the time passed; {@code true} in the first case. */
    boolean awaitAllHandled(long timeout, TimeUnit unit) throws InterruptedException {
        return this.allHandled.await(timeout, unit);
    }

    int handled() {
        return this.handled.get();
    }

    /**
     * Handler invocations per second in steady state: from the return of request {@code skip} to the
     * last invocation, counting the invocations in that window. The first requests are left out
     * because they pay for what happens once per server, not per request (the acceptor's first
     * rounds, and until the handler threads were started with the server, their creation).
     */
    double perSecond(int skip) {
        if (this.returned <= skip) {
            return Double.NaN;
        }
        long start = this.returnedAt[skip];
        long last = Long.MIN_VALUE;
        int count = 0;
        for (int i = 0; i < this.returned; i++) {
            if (this.invokedAt[i] != 0 && this.invokedAt[i] - start >= 0) {
                count++;
                last = Math.max(last, this.invokedAt[i]);
            }
        }
        return count * 1e9 / (last - start);
    }

    /** Dispatch latency of each request a handler saw, in nanoseconds. */
    long[] latencies() {
        long[] latencies = new long[this.returned];
        int count = 0;
        for (int i = 0; i < this.returned; i++) {
            if (this.invokedAt[i] != 0) {
                latencies[count++] = this.invokedAt[i] - this.returnedAt[i];
            }
        }
        return java.util.Arrays.copyOf(latencies, count);
    }

    static byte[] privateData(int sequence) {
        return new byte[] { (byte) sequence, (byte) (sequence >>> 8), (byte) (sequence >>> 16), (byte) (sequence >>> 24) };
    }

    static int sequenceOf(byte[] privateData) {
        return (privateData[0] & 0xff) | (privateData[1] & 0xff) << 8 | (privateData[2] & 0xff) << 16
                | (privateData[3] & 0xff) << 24;
    }
}
