package dev.rpma.jna.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import dev.rpma.jna.raw.LibC;

/** {@link Epoll} on real eventfds. */
@Timeout(30)
class EpollNativeTest {

    private final int first = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);

    private final int second = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);

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
    void looksAtOneFdWithoutWaitingAndLeavesTheLastWaitsResultsAlone() {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.first, 11);
            signal(this.first);
            assertThat(epoll.await(0)).isOne();
            assertThat(epoll.isReadableNow(this.second)).isFalse();
            assertThat(epoll.isReadableNow(this.first)).isTrue();
            assertThat(epoll.token(0)).isEqualTo(11);
            drain(this.first);
            assertThat(epoll.isReadableNow(this.first)).isFalse();
        }
    }

    @Test
    void reportsTheTokensOfTheReadableFdsLevelTriggered() {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.first, 11);
            epoll.add(this.second, 1L << 40);
            assertThat(epoll.await(0)).isZero();
            signal(this.second);
            assertThat(epoll.await(1000)).isOne();
            assertThat(epoll.token(0)).isEqualTo(1L << 40);
            assertThat(epoll.readyEvents(0) & LibC.EPOLLIN).isNotZero();
            assertThat(epoll.await(0)).as("level-triggered: still readable").isOne();
            signal(this.first);
            assertThat(epoll.await(0)).isEqualTo(2);
            assertThat(Set.of(epoll.token(0), epoll.token(1))).containsExactlyInAnyOrder(11L, 1L << 40);
            drain(this.first);
            drain(this.second);
            assertThat(epoll.await(0)).isZero();
        }
    }

    @Test
    void aRemovedFdIsNoLongerReported() {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.first, 1);
            signal(this.first);
            epoll.remove(this.first);
            assertThat(epoll.await(0)).isZero();
            assertThatThrownBy(() -> epoll.remove(this.first)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("errno 2");
            drain(this.first);
        }
    }

    @Test
    void reportsAtMostMaxEventsPerWaitAndTheRestInTheNext() {
        try (Epoll epoll = new Epoll(1)) {
            epoll.add(this.first, 1);
            epoll.add(this.second, 2);
            signal(this.first);
            signal(this.second);
            Set<Long> seen = new HashSet<>();
            assertThat(epoll.await(0)).isOne();
            seen.add(epoll.token(0));
            drain(seen.contains(1L) ? this.first : this.second);
            assertThat(epoll.await(0)).isOne();
            seen.add(epoll.token(0));
            assertThat(seen).containsExactlyInAnyOrder(1L, 2L);
            drain(seen.size() == 2 && epoll.token(0) == 1L ? this.first : this.second);
        }
    }

    @Test
    void aWakeupIsConsumedAndNotReportedEvenAmongReadyFds() throws Exception {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.first, 7);
            CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(() -> epoll.await(-1));
            Thread.sleep(100);
            assertThat(waiting).isNotDone();
            epoll.wakeup();
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isZero();
            assertThat(epoll.await(50)).as("the wake-up was consumed").isZero();

            signal(this.first);
            epoll.wakeup();
            assertThat(epoll.await(1000)).isOne();
            assertThat(epoll.token(0)).isEqualTo(7);
            drain(this.first);
        }
    }

    @Test
    void theWakeupTokenIsReserved() {
        try (Epoll epoll = new Epoll(1)) {
            assertThatThrownBy(() -> epoll.add(this.first, Epoll.WAKEUP_TOKEN))
                .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> epoll.add(-1, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("errno 9");
        }
    }

    @Test
    void closeIsIdempotentAndAWakeupAfterItIsHarmless() {
        Epoll epoll = new Epoll(1);
        epoll.close();
        epoll.close();
        epoll.wakeup();
        assertThat(epoll.isClosed()).isTrue();
    }
}
