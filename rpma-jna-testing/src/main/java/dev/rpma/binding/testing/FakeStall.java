package dev.rpma.binding.testing;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One call held inside the fake librpma until {@link #release()}: what a native wait that does not
 * return looks like ({@code rpma_cq_wait} on a blocking channel with no completion coming, a provider
 * that hangs). The call holds whatever the binding holds across a native call (the handle's
 * in-flight count), but not the fake's lock, so every other call goes on. A thread interrupted while
 * held stays held, as a thread in a native call does. Made by {@link FakeLibRpma#stallNext(String)}.
 */
public final class FakeStall {

    private final String function;

    private final CountDownLatch entered = new CountDownLatch(1);

    private final CountDownLatch released = new CountDownLatch(1);

    private volatile String thread;

    FakeStall(String function) {
        this.function = function;
    }

    /** Waits until a call took this stall; {@code false} on timeout. */
    public boolean awaitEntered(Duration timeout) throws InterruptedException {
        return this.entered.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Whether a call is held here now or was. */
    public boolean isEntered() {
        return this.entered.getCount() == 0;
    }

    /** Lets the held call go on (its body runs then); idempotent, and harmless before a call took it. */
    public void release() {
        this.released.countDown();
    }

    /** Whether {@link #release()} was called. */
    public boolean isReleased() {
        return this.released.getCount() == 0;
    }

    /** The name of the thread held here, or {@code null} before a call took it. */
    public String thread() {
        return this.thread;
    }

    /** Holds the calling thread until released, ignoring interrupts as a native call does. */
    void hold() {
        this.thread = Thread.currentThread().getName();
        this.entered.countDown();
        boolean interrupted = false;
        while (true) {
            try {
                this.released.await();
                break;
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "FakeStall[" + this.function + (isEntered() ? ", held " + this.thread : "")
                + (isReleased() ? ", released" : "") + "]";
    }
}
