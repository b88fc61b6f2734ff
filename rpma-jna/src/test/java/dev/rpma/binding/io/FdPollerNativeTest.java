package dev.rpma.binding.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.rpma.binding.internal.LibC;

/** {@link FdPoller} and {@link FileDescriptors} on real eventfds. */
@Timeout(30)
class FdPollerNativeTest {

    private final EventFdPair eventFds = new EventFdPair(LibC.EFD_CLOEXEC);

    @AfterEach
    void close() {
        this.eventFds.close();
    }

    @Test
    void reportsWhichFdIsReadable() {
        try (FdPoller poller = new FdPoller(2)) {
            int[] fds = { this.eventFds.first, this.eventFds.second };
            assertThat(poller.capacity()).isEqualTo(2);
            assertThat(poller.await(fds, 2, 0)).isZero();
            assertThat(poller.isReadable(0)).isFalse();

            this.eventFds.signal(this.eventFds.second);
            assertThat(poller.await(fds, 2, 1000)).isOne();
            assertThat(poller.isReadable(0)).isFalse();
            assertThat(poller.isReadable(1)).isTrue();

            this.eventFds.signal(this.eventFds.first);
            assertThat(poller.await(fds, 2, 1000)).isEqualTo(2);
            this.eventFds.drain(this.eventFds.first);
            this.eventFds.drain(this.eventFds.second);
            assertThat(poller.await(fds, 2, 0)).isZero();
            assertThat(poller.isReadable(1)).as("cleared by the next await").isFalse();
            assertThatThrownBy(() -> poller.isReadable(2)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> poller.await(new int[3], 3, 0)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void looksAtOneFdWithoutWaitingAndKeepsTheLastAwaitsResults() {
        try (FdPoller poller = new FdPoller(2)) {
            int[] fds = { this.eventFds.first, this.eventFds.second };
            this.eventFds.signal(this.eventFds.second);
            assertThat(poller.await(fds, 2, 1000)).isOne();
            assertThat(poller.isReadableNow(this.eventFds.first)).isFalse();
            this.eventFds.signal(this.eventFds.first);
            assertThat(poller.isReadableNow(this.eventFds.first)).isTrue();
            assertThat(poller.isReadable(0)).as("as the await saw it").isFalse();
            assertThat(poller.isReadable(1)).isTrue();
            this.eventFds.drain(this.eventFds.first);
            this.eventFds.drain(this.eventFds.second);
        }
    }

    @Test
    void timesOut() {
        try (FdPoller poller = new FdPoller(1)) {
            long start = System.nanoTime();
            assertThat(poller.await(new int[] { this.eventFds.first }, 1, 100)).isZero();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(90);
        }
    }

    @Test
    void wakeupFromAnotherThreadEndsAnUnboundedWait() throws Exception {
        try (FdPoller poller = new FdPoller(1)) {
            CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(
                    () -> poller.await(new int[] { this.eventFds.first }, 1, -1));
            Thread.sleep(100);
            assertThat(waiting).isNotDone();
            poller.wakeup();
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isZero();
            // the wake-up was consumed: the next wait times out instead of returning at once
            assertThat(poller.await(new int[] { this.eventFds.first }, 1, 50)).isZero();
        }
    }

    @Test
    void closeIsIdempotentAndAWakeupAfterItIsHarmless() {
        FdPoller poller = new FdPoller(1);
        assertThat(poller.isClosed()).isFalse();
        poller.close();
        assertThat(poller.isClosed()).isTrue();
        poller.close();
        poller.wakeup();
        assertThat(poller.isClosed()).isTrue();
    }

    @Test
    void wakeupBeforeTheWaitIsNotLost() {
        try (FdPoller poller = new FdPoller(1)) {
            poller.wakeup();
            long start = System.nanoTime();
            assertThat(poller.await(new int[] { this.eventFds.first }, 1, 10_000)).isZero();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
        }
    }

    @Test
    void closeIsIdempotentAndWakeupAfterCloseIsHarmless() {
        FdPoller poller = new FdPoller(1);
        poller.close();
        poller.close();
        poller.wakeup();
    }

    @Test
    void blockingFlag() {
        assertThat(FileDescriptors.isBlocking(this.eventFds.first)).isFalse();
        assertThat(FileDescriptors.isBlocking(this.eventFds.second)).isTrue();
        FileDescriptors.setBlocking(this.eventFds.second, false);
        assertThat(FileDescriptors.isBlocking(this.eventFds.second)).isFalse();
        FileDescriptors.setBlocking(this.eventFds.second, true);
        assertThat(FileDescriptors.isBlocking(this.eventFds.second)).isTrue();
        assertThatThrownBy(() -> FileDescriptors.isBlocking(-1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("errno 9");
    }
}
