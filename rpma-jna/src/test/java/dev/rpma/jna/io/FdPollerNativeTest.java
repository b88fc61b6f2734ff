package dev.rpma.jna.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import dev.rpma.jna.raw.LibC;

/** {@link FdPoller} and {@link FileDescriptors} on real eventfds. */
@Timeout(30)
class FdPollerNativeTest {

    private final int first = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);

    private final int second = LibC.eventfd(0, LibC.EFD_CLOEXEC);

    private final Memory one = new Memory(8);

    @AfterEach
    void close() {
        LibC.close(this.first);
        LibC.close(this.second);
        this.one.close();
    }

    private void signal(int fd) {
        this.one.setLong(0, 1);
        assertThat(LibC.write(fd, Pointer.nativeValue(this.one), 8)).isEqualTo(8);
    }

    private void drain(int fd) {
        assertThat(LibC.read(fd, Pointer.nativeValue(this.one), 8)).isEqualTo(8);
    }

    @Test
    void reportsWhichFdIsReadable() {
        try (FdPoller poller = new FdPoller(2)) {
            int[] fds = { this.first, this.second };
            assertThat(poller.capacity()).isEqualTo(2);
            assertThat(poller.await(fds, 2, 0)).isZero();
            assertThat(poller.isReadable(0)).isFalse();

            signal(this.second);
            assertThat(poller.await(fds, 2, 1000)).isOne();
            assertThat(poller.isReadable(0)).isFalse();
            assertThat(poller.isReadable(1)).isTrue();

            signal(this.first);
            assertThat(poller.await(fds, 2, 1000)).isEqualTo(2);
            drain(this.first);
            drain(this.second);
            assertThat(poller.await(fds, 2, 0)).isZero();
            assertThat(poller.isReadable(1)).as("cleared by the next await").isFalse();
            assertThatThrownBy(() -> poller.isReadable(2)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> poller.await(new int[3], 3, 0)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void looksAtOneFdWithoutWaitingAndKeepsTheLastAwaitsResults() {
        try (FdPoller poller = new FdPoller(2)) {
            int[] fds = { this.first, this.second };
            signal(this.second);
            assertThat(poller.await(fds, 2, 1000)).isOne();
            assertThat(poller.isReadableNow(this.first)).isFalse();
            signal(this.first);
            assertThat(poller.isReadableNow(this.first)).isTrue();
            assertThat(poller.isReadable(0)).as("as the await saw it").isFalse();
            assertThat(poller.isReadable(1)).isTrue();
            drain(this.first);
            drain(this.second);
        }
    }

    @Test
    void timesOut() {
        try (FdPoller poller = new FdPoller(1)) {
            long start = System.nanoTime();
            assertThat(poller.await(new int[] { this.first }, 1, 100)).isZero();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(90);
        }
    }

    @Test
    void wakeupFromAnotherThreadEndsAnUnboundedWait() throws Exception {
        try (FdPoller poller = new FdPoller(1)) {
            CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(
                    () -> poller.await(new int[] { this.first }, 1, -1));
            Thread.sleep(100);
            assertThat(waiting).isNotDone();
            poller.wakeup();
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isZero();
            // the wake-up was consumed: the next wait times out instead of returning at once
            assertThat(poller.await(new int[] { this.first }, 1, 50)).isZero();
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
            assertThat(poller.await(new int[] { this.first }, 1, 10_000)).isZero();
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
        assertThat(FileDescriptors.isBlocking(this.first)).isFalse();
        assertThat(FileDescriptors.isBlocking(this.second)).isTrue();
        FileDescriptors.setBlocking(this.second, false);
        assertThat(FileDescriptors.isBlocking(this.second)).isFalse();
        FileDescriptors.setBlocking(this.second, true);
        assertThat(FileDescriptors.isBlocking(this.second)).isTrue();
        assertThatThrownBy(() -> FileDescriptors.isBlocking(-1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("errno 9");
    }
}
