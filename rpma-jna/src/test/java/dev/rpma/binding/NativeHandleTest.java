package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.rpma.binding.internal.LibRpma;

/**
 * {@link NativeHandle}'s state word on its own, without librpma: calls in flight hold the pointer,
 * closing begins once and waits for them (or, if idle only, does not), and the pointer is handed out
 * to be freed exactly once. The close of each native type over the scripted fake is in
 * rpma-jna-testing's {@code ClosedHandleTest} and {@code CloseRaceTest}.
 */
@Timeout(30)
class NativeHandleTest {

    private static final long POINTER = 0x7f00_1234_5000L;

    /** A raw layer that fails the test on any call: the handle's bookkeeping makes none. */
    private static final Rpma NO_NATIVE_CALLS = Rpma.using((LibRpma) Proxy.newProxyInstance(
            LibRpma.class.getClassLoader(), new Class<?>[] { LibRpma.class }, (proxy, method, args) -> {
                throw new AssertionError("native call " + method.getName());
            }));

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() throws InterruptedException {
        this.threads.shutdownNow();
        assertThat(this.threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aNullPointerIsNoHandle() {
        assertThatThrownBy(() -> new Handle(0)).isInstanceOf(IllegalStateException.class)
            .hasMessage("librpma returned success and a NULL test object");
    }

    @Test
    void callsGetThePointerUntilClosingBeginsAndFailWithoutItAfter() {
        Handle handle = new Handle(POINTER);
        assertThat(handle.acquire()).isEqualTo(POINTER);
        handle.release();
        assertThat(handle.isClosed()).isFalse();
        assertThat(handle).hasToString("Handle[open]");

        assertThat(handle.beginClose()).isEqualTo(POINTER);

        assertThat(handle.isClosed()).isTrue();
        assertThat(handle.isFreed()).isTrue();
        assertThat(handle).hasToString("Handle[closed]");
        assertThatThrownBy(handle::acquire).isInstanceOf(IllegalStateException.class)
            .hasMessage("This test object is closed; create a new one");
    }

    @Test
    void thePointerIsHandedOutToBeFreedOnce() {
        Handle closed = new Handle(POINTER);
        assertThat(closed.beginClose()).isEqualTo(POINTER);
        assertThat(closed.beginClose()).isZero();
        assertThat(closed.beginCloseIfIdle()).isZero();

        Handle closedIfIdle = new Handle(POINTER);
        assertThat(closedIfIdle.beginCloseIfIdle()).isEqualTo(POINTER);
        assertThat(closedIfIdle.beginCloseIfIdle()).isZero();
        assertThat(closedIfIdle.beginClose()).isZero();
    }

    @Test
    void nestedCallsAreCountedOneByOne() throws Exception {
        Handle handle = new Handle(POINTER);
        handle.acquire();
        handle.acquire();
        handle.release();
        // one call is still in flight: closing must wait for it
        Future<Long> close = this.threads.submit(handle::beginClose);
        assertThat(waitsAtLeast(close, 100)).isTrue();
        assertThat(handle.isFreed()).isFalse();

        handle.release();

        assertThat(close.get(10, TimeUnit.SECONDS)).isEqualTo(POINTER);
        assertThat(handle.isFreed()).isTrue();
    }

    @Test
    void closeWaitsForTheCallInFlightThatGotIn() throws Exception {
        Handle handle = new Handle(POINTER);
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch finishCall = new CountDownLatch(1);
        Future<Long> call = this.threads.submit(() -> {
            long pointer = handle.acquire();
            try {
                inCall.countDown();
                finishCall.await();
                return pointer;
            }
            finally {
                handle.release();
            }
        });
        assertThat(inCall.await(10, TimeUnit.SECONDS)).isTrue();
        Future<Long> close = this.threads.submit(handle::beginClose);

        // the closed bit is set at once; the pointer is not handed out while the call uses it
        awaitTrue(handle::isClosed);
        assertThat(waitsAtLeast(close, 100)).isTrue();
        assertThat(handle.isFreed()).isFalse();
        assertThatThrownBy(handle::acquire).isInstanceOf(IllegalStateException.class);

        finishCall.countDown();

        assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo(POINTER);
        assertThat(close.get(10, TimeUnit.SECONDS)).isEqualTo(POINTER);
        assertThat(handle.isFreed()).isTrue();
    }

    @Test
    void anOwnerThatMustNotWaitGetsThePointerOnceTheCallsInFlightReturned() {
        Handle handle = new Handle(POINTER);
        handle.acquire();

        assertThat(handle.beginCloseIfIdle()).as("a call is in flight").isZero();
        assertThat(handle.isClosed()).isTrue();
        assertThat(handle.isFreed()).isFalse();
        assertThatThrownBy(handle::acquire).isInstanceOf(IllegalStateException.class);
        assertThat(handle.beginCloseIfIdle()).as("still in flight").isZero();

        handle.release();

        assertThat(handle.beginCloseIfIdle()).isEqualTo(POINTER);
        assertThat(handle.isFreed()).isTrue();
        assertThat(handle.beginCloseIfIdle()).isZero();
    }

    @Test
    void aCloseAfterClosingBeganReturnsAtOnceEvenWithACallInFlight() {
        Handle handle = new Handle(POINTER);
        // this thread's own call is in flight: a close that waited for it would never return
        handle.acquire();
        assertThat(handle.beginCloseIfIdle()).isZero();

        assertThat(handle.beginClose()).isZero();

        handle.release();
        assertThat(handle.beginCloseIfIdle()).as("the owner that began closing frees it").isEqualTo(POINTER);
    }

    /** Many threads call while two owners close, one waiting and one not: no call gets in after closing began. */
    @Test
    void racingCallsAndClosesHandThePointerOutOnceAndNeverAfterItWasHandedOut() throws Exception {
        for (int round = 0; round < 200; round++) {
            Handle handle = new Handle(POINTER);
            AtomicLong handedOut = new AtomicLong();
            AtomicInteger handedOutTimes = new AtomicInteger();
            AtomicInteger callsAfterFree = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<?>[] callers = new CompletableFuture<?>[3];
            for (int i = 0; i < callers.length; i++) {
                callers[i] = CompletableFuture.runAsync(() -> {
                    await(go);
                    for (int n = 0; n < 1000; n++) {
                        try {
                            handle.acquire();
                        }
                        catch (IllegalStateException closed) {
                            return;
                        }
                        if (handedOutTimes.get() != 0) {
                            callsAfterFree.incrementAndGet();
                        }
                        handle.release();
                    }
                }, this.threads);
            }
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
                await(go);
                record(handle.beginClose(), handedOut, handedOutTimes);
            }, this.threads);
            CompletableFuture<Void> notWaiting = CompletableFuture.runAsync(() -> {
                await(go);
                while (!handle.isFreed()) {
                    record(handle.beginCloseIfIdle(), handedOut, handedOutTimes);
                    Thread.onSpinWait();
                }
            }, this.threads);
            go.countDown();
            CompletableFuture.allOf(callers).get(10, TimeUnit.SECONDS);
            CompletableFuture.allOf(waiting, notWaiting).get(10, TimeUnit.SECONDS);

            assertThat(handedOutTimes).as("round %d", round).hasValue(1);
            assertThat(handedOut).hasValue(POINTER);
            assertThat(callsAfterFree).hasValue(0);
            assertThat(handle.isFreed()).isTrue();
        }
    }

    private static void record(long pointer, AtomicLong handedOut, AtomicInteger times) {
        if (pointer != 0) {
            handedOut.set(pointer);
            times.incrementAndGet();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Whether {@code future} is still not done after {@code millis}. */
    private static boolean waitsAtLeast(Future<?> future, long millis) throws InterruptedException {
        Thread.sleep(millis);
        return !future.isDone();
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 10 s").isLessThan(end);
            Thread.sleep(1);
        }
    }

    private static final class Handle extends NativeHandle {

        Handle(long pointer) {
            super(NO_NATIVE_CALLS, pointer);
        }

        @Override
        String kind() {
            return "test object";
        }
    }
}
