package dev.rpma.binding.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.rpma.binding.internal.LibC;

/** {@link Epoll} on real eventfds. */
@Timeout(30)
class EpollNativeTest {

    private final EventFdPair eventFds = new EventFdPair(LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);

    @AfterEach
    void close() {
        this.eventFds.close();
    }

    @Test
    void looksAtOneFdWithoutWaitingAndLeavesTheLastWaitsResultsAlone() {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.eventFds.first, 11);
            this.eventFds.signal(this.eventFds.first);
            assertThat(epoll.await(0)).isOne();
            assertThat(epoll.isReadableNow(this.eventFds.second)).isFalse();
            assertThat(epoll.isReadableNow(this.eventFds.first)).isTrue();
            assertThat(epoll.token(0)).isEqualTo(11);
            this.eventFds.drain(this.eventFds.first);
            assertThat(epoll.isReadableNow(this.eventFds.first)).isFalse();
        }
    }

    @Test
    void reportsTheTokensOfTheReadableFdsLevelTriggered() {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.eventFds.first, 11);
            epoll.add(this.eventFds.second, 1L << 40);
            assertThat(epoll.await(0)).isZero();
            this.eventFds.signal(this.eventFds.second);
            assertThat(epoll.await(1000)).isOne();
            assertThat(epoll.token(0)).isEqualTo(1L << 40);
            assertThat(epoll.readyEvents(0) & LibC.EPOLLIN).isNotZero();
            assertThat(epoll.await(0)).as("level-triggered: still readable").isOne();
            this.eventFds.signal(this.eventFds.first);
            assertThat(epoll.await(0)).isEqualTo(2);
            assertThat(Set.of(epoll.token(0), epoll.token(1))).containsExactlyInAnyOrder(11L, 1L << 40);
            this.eventFds.drain(this.eventFds.first);
            this.eventFds.drain(this.eventFds.second);
            assertThat(epoll.await(0)).isZero();
        }
    }

    @Test
    void aRemovedFdIsNoLongerReported() {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.eventFds.first, 1);
            this.eventFds.signal(this.eventFds.first);
            epoll.remove(this.eventFds.first);
            assertThat(epoll.await(0)).isZero();
            assertThatThrownBy(() -> epoll.remove(this.eventFds.first)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("errno 2");
            this.eventFds.drain(this.eventFds.first);
        }
    }

    @Test
    void reportsAtMostMaxEventsPerWaitAndTheRestInTheNext() {
        try (Epoll epoll = new Epoll(1)) {
            epoll.add(this.eventFds.first, 1);
            epoll.add(this.eventFds.second, 2);
            this.eventFds.signal(this.eventFds.first);
            this.eventFds.signal(this.eventFds.second);
            Set<Long> seen = new HashSet<>();
            assertThat(epoll.await(0)).isOne();
            seen.add(epoll.token(0));
            this.eventFds.drain(seen.contains(1L) ? this.eventFds.first : this.eventFds.second);
            assertThat(epoll.await(0)).isOne();
            seen.add(epoll.token(0));
            assertThat(seen).containsExactlyInAnyOrder(1L, 2L);
            this.eventFds.drain(seen.size() == 2 && epoll.token(0) == 1L ? this.eventFds.first : this.eventFds.second);
        }
    }

    @Test
    void aWakeupIsConsumedAndNotReportedEvenAmongReadyFds() throws Exception {
        try (Epoll epoll = new Epoll(4)) {
            epoll.add(this.eventFds.first, 7);
            CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(() -> epoll.await(-1));
            Thread.sleep(100);
            assertThat(waiting).isNotDone();
            epoll.wakeup();
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isZero();
            assertThat(epoll.await(50)).as("the wake-up was consumed").isZero();

            this.eventFds.signal(this.eventFds.first);
            epoll.wakeup();
            assertThat(epoll.await(1000)).isOne();
            assertThat(epoll.token(0)).isEqualTo(7);
            this.eventFds.drain(this.eventFds.first);
        }
    }

    @Test
    void theWakeupTokenIsReserved() {
        try (Epoll epoll = new Epoll(1)) {
            assertThatThrownBy(() -> epoll.add(this.eventFds.first, Epoll.WAKEUP_TOKEN))
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
