package dev.rpma.server;

import static dev.rpma.server.ServerHarness.u64;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.testing.FakeCompletionQueue;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.PostedOperation;

/**
 * The data path of a raw endpoint over the scripted fake: messages reach the handler from their
 * registered receive slot, replies go back from a send slot, and every slot is posted again.
 */
class RawSessionTest {

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void nothingLeaks() {
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void aPingPongRoundTripGoesThroughTheHandlerOnTheSessionsLoop() {
        List<String> threads = new CopyOnWriteArrayList<>();
        this.harness.startRaw((message, session) -> {
            threads.add(Thread.currentThread().getName());
            return session.newMessage().putLong(message.getLong(0) + 1).flip();
        });
        FakeConnection client = this.harness.connectOne();
        assertThat(client.postedReceives()).as("every receive slot posted before the accept").isEqualTo(8);

        for (long value = 1; value <= 100; value++) {
            client.deliver(u64(value));
            int expected = (int) value;
            this.harness.await("reply " + value, () -> client.sent().size() == expected);
            assertThat(u64(client.sent().get(expected - 1))).isEqualTo(value + 1);
        }
        assertThat(threads).hasSize(100).containsOnly("rpma-loop-0");
        this.harness.await("the last slot posted again", () -> client.postedReceives() == 8);
        assertThat(this.harness.statistics().messagesReceived()).isEqualTo(100);
        // counted once rpma_send returned, just after the fake handed the reply over
        this.harness.await("the last send counted", () -> this.harness.statistics().messagesSent() == 100);
        assertThat(this.harness.statistics().bytesReceived()).isEqualTo(800);
    }

    @Test
    void eachSessionCountsItsOwnMessages() {
        // every third message is answered
        this.harness.startRaw((message, session) -> (message.getLong(0) % 3 == 0) ? message : null);
        FakeConnection a = this.harness.connectOne();
        FakeConnection b = this.harness.connectOne();
        for (long value = 1; value <= 9; value++) {
            a.deliver(u64(value));
        }
        b.deliver(u64(3));
        this.harness.await("the replies", () -> a.sent().size() == 3 && b.sent().size() == 1);
        RpmaSession first = this.harness.established.get(0);
        RpmaSession second = this.harness.established.get(1);
        this.harness.await("the counts", () -> first.messagesSent() == 3 && second.messagesSent() == 1);
        assertThat(first.messagesReceived()).isEqualTo(9);
        assertThat(second.messagesReceived()).isEqualTo(1);
    }

    @Test
    void aMessageTheHandlerReturnsAsItIsGoesBackCopied() {
        this.harness.startRaw((message, session) -> message);
        FakeConnection client = this.harness.connectOne();
        client.deliver(new byte[] { 1, 2, 3 });
        this.harness.await("the echo", () -> client.sent().size() == 1);
        assertThat(client.sent().get(0)).containsExactly(1, 2, 3);
    }

    @Test
    void theClientClosingEndsTheSessionAndFreesEverything() {
        this.harness.startRaw((message, session) -> null);
        FakeConnection client = this.harness.connectOne();
        client.peerDisconnects();
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(client.deletedOnThread()).isEqualTo("rpma-loop-0");
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CLOSED);
        assertThat(this.harness.statistics().activeConnections()).isZero();
    }

    @Test
    void sendsFromAnotherThreadReachTheClient() {
        this.harness.startRaw((message, session) -> null);
        FakeConnection client = this.harness.connectOne();
        RpmaSession session = this.harness.established.get(0);
        session.send(ByteBuffer.wrap(new byte[] { 9 }));
        this.harness.await("the send", () -> client.sent().size() == 1);
        assertThat(client.sent().get(0)).containsExactly(9);
    }

    @Test
    void moreCompletionsThanABatchAreAllTakenAcrossBatchesAndRounds() {
        // 16 completions per batch and 4 batches per readiness: 100 messages in one go cross both bounds
        this.harness.messages = this.harness.messages.withSlots(100, 8);
        AtomicLong sum = new AtomicLong();
        this.harness.startRaw((message, session) -> {
            sum.addAndGet(message.getLong(0));
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        assertThat(client.postedReceives()).isEqualTo(100);
        for (long i = 1; i <= 100; i++) {
            client.deliver(u64(i));
        }
        this.harness.await("every message", () -> this.harness.statistics().messagesReceived() == 100);
        assertThat(sum.get()).isEqualTo(5050);
        this.harness.await("every slot posted again", () -> client.postedReceives() == 100);
    }

    @Test
    void aMessageThatArrivesWhileTheLoopSleepsWakesIt() throws InterruptedException {
        this.harness.startRaw((message, session) -> message);
        FakeConnection client = this.harness.connectOne();
        client.deliver(u64(1));
        this.harness.await("the first reply", () -> client.sent().size() == 1);
        // the loop has drained the queue, re-armed it, and sleeps in epoll_wait
        Thread.sleep(100);
        assertThat(client.completionQueue().isArmed()).isTrue();
        client.deliver(u64(2));
        this.harness.await("the second reply", () -> client.sent().size() == 2);
    }

    @Test
    void aSlotIsPostedAgainAfterItsHandlerThrewAndTheSessionGoesOn() {
        this.harness.startRaw((message, session) -> {
            if (message.getLong(0) == 13) {
                throw new IllegalStateException("unlucky");
            }
            return message;
        });
        FakeConnection client = this.harness.connectOne();
        client.deliver(u64(13));
        this.harness.await("the failure counted", () -> this.harness.statistics().handlerFailures() == 1);
        this.harness.await("the slot posted again", () -> client.postedReceives() == 8);
        client.deliver(u64(14));
        this.harness.await("the next reply", () -> client.sent().size() == 1);
        assertThat(u64(client.sent().get(0))).isEqualTo(14);
        assertThat(this.harness.established.get(0).isOpen()).isTrue();
    }

    @Test
    void aMessageLargerThanItsSlotEndsOnlyItsSession() {
        this.harness.startRaw((message, session) -> message);
        FakeConnection bad = this.harness.connectOne();
        FakeConnection good = this.harness.connectOne();
        bad.deliver(new byte[65]);
        this.harness.await("the bad session's end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended).singleElement().satisfies((end) -> {
            assertThat(end.reason()).isEqualTo(RpmaSessionEnd.Reason.ERROR);
            assertThat(end.detail()).contains("larger than the 64 bytes a receive takes");
        });
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.OVERSIZED)).isEqualTo(1);
        good.deliver(u64(5));
        this.harness.await("the good one still served", () -> good.sent().size() == 1);
    }

    @Test
    void receivesArePostedForTheLargestMessageNotTheWholeCacheAlignedSlot() {
        this.harness.messages = this.harness.messages.withMaxMessageSize(8);
        this.harness.startRaw((message, session) -> message);
        FakeConnection bad = this.harness.connectOne();
        assertThat(bad.request().receives()).hasSize(this.harness.messages.receiveSlots())
            .allSatisfy((receive) -> assertThat(receive.length()).isEqualTo(8));
        // a slot is 64 bytes, but the device refuses the ninth byte
        FakeConnection good = this.harness.connectOne();
        good.deliver(u64(1));
        this.harness.await("a reposted receive", () -> good.posted().stream()
            .anyMatch((operation) -> operation.function().equals("rpma_recv") && operation.length() == 8));
        bad.deliver(new byte[9]);
        this.harness.await("the bad session's end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.OVERSIZED)).isEqualTo(1);
    }

    /** Least privilege for the slots too: the device writes only the receive slots. */
    @Test
    void receiveSlotsAreRegisteredForReceivesOnlyAndSendSlotsForSendsOnly() {
        this.harness.startRaw((message, session) -> message);
        this.harness.connectOne();
        assertThat(this.harness.fake.callLog()).filteredOn((call) -> call.function().equals("rpma_mr_reg"))
            .extracting((call) -> (int) call.args()[3])
            .containsExactly(MemoryUsage.RECV.flag(), MemoryUsage.SEND.flag());
    }

    @Test
    void anEmptyMessageEndsOnlyItsSession() {
        this.harness.startRaw((message, session) -> message);
        FakeConnection bad = this.harness.connectOne();
        bad.deliver(new byte[0]);
        this.harness.await("the bad session's end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.EMPTY)).isEqualTo(1);
        assertThat(bad.disconnects()).isEqualTo(1);
    }

    @Test
    void aHandlerThatSaysOutOfProtocolEndsItsSession() {
        this.harness.startRaw((message, session) -> {
            if (message.remaining() != 8) {
                throw new RpmaProtocolException("a ping-pong message is 8 bytes, not " + message.remaining());
            }
            return message;
        });
        FakeConnection bad = this.harness.connectOne();
        bad.deliver(new byte[3]);
        this.harness.await("the bad session's end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.MALFORMED)).isEqualTo(1);
        assertThat(this.harness.ended.get(0).detail()).contains("8 bytes, not 3");
    }

    @Test
    void sendsBeyondTheSendSlotsWaitAndGoOutAsSlotsFree() {
        this.harness.messages = this.harness.messages.withSlots(8, 2);
        this.harness.startRaw((message, session) -> {
            for (int i = 0; i < 5; i++) {
                session.send(ByteBuffer.wrap(new byte[] { (byte) i }));
            }
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        // the client's receives are counted: each send needs one, so the first two wait in the device
        client.peerReceives(0);
        client.deliver(u64(1));
        this.harness.await("two in the device, three queued", () -> client.sendsWaitingForPeer() == 2
                && this.harness.statistics().sendsWaiting() == 3);
        client.grantPeerReceives(5);
        this.harness.await("all five", () -> client.sent().size() == 5);
        assertThat(client.sent()).extracting((bytes) -> bytes[0]).containsExactly((byte) 0, (byte) 1, (byte) 2,
                (byte) 3, (byte) 4);
        this.harness.await("none waits", () -> this.harness.statistics().sendsWaiting() == 0);
        assertThat(this.harness.statistics().sendsQueued()).isEqualTo(3);
    }

    @Test
    void aSendQueueOverTheLimitEndsTheSessionAsCapacity() {
        this.harness.messages = this.harness.messages.withSlots(8, 1).withSendQueueLimit(2);
        this.harness.startRaw((message, session) -> {
            for (int i = 0; i < 5; i++) {
                session.send(ByteBuffer.wrap(new byte[] { 1 }));
            }
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        client.peerReceives(0);
        client.deliver(u64(1));
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CAPACITY);
        this.harness.await("nothing waits", () -> this.harness.statistics().sendsWaiting() == 0);
    }

    @Test
    void aMessageBuiltInPlaceIsSentFromItsSlotWithoutACopy() {
        this.harness.startRaw((message, session) -> {
            ByteBuffer reply = session.newMessage();
            assertThat(reply.isDirect()).as("registered memory").isTrue();
            return reply.putLong(7).flip();
        });
        FakeConnection client = this.harness.connectOne();
        client.deliver(u64(1));
        this.harness.await("the reply", () -> client.sent().size() == 1);
        assertThat(u64(client.sent().get(0))).isEqualTo(7);
        PostedOperation send = client.posted().stream().filter((op) -> op.function().equals("rpma_send")).findFirst()
            .orElseThrow();
        assertThat(send.length()).isEqualTo(8);
    }

    @Test
    void aMessageTooLargeToSendFailsTheCallerNotTheSession() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        this.harness.startRaw((message, session) -> {
            try {
                session.send(new byte[65]);
            }
            catch (IllegalArgumentException ex) {
                thrown.set(ex);
            }
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        client.deliver(u64(1));
        this.harness.await("the attempt", () -> thrown.get() != null);
        assertThat(thrown.get()).hasMessageContaining("max-message-size of 64");
        assertThat(this.harness.established.get(0).isOpen()).isTrue();
    }

    @Test
    void aSilentSessionEndsAtTheIdleTimeoutWhileABusyOneGoesOn() throws InterruptedException {
        this.harness.limits = new RpmaEndpointSettings.Limits(16, Duration.ofMillis(300));
        this.harness.startRaw((message, session) -> message);
        long start = System.nanoTime();
        FakeConnection silent = this.harness.connectOne();
        FakeConnection busy = this.harness.connectOne();
        while (!silent.isDeleted() && System.nanoTime() - start < ServerHarness.WAIT.toNanos()) {
            busy.deliver(u64(1));
            Thread.sleep(20);
        }
        long took = Duration.ofNanos(System.nanoTime() - start).toMillis();
        assertThat(silent.isDeleted()).isTrue();
        assertThat(took).as("ended between the timeout and 1.25 times it, plus scheduling").isBetween(300L, 1500L);
        assertThat(busy.isDeleted()).isFalse();
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended).singleElement()
            .satisfies((end) -> assertThat(end.reason()).isEqualTo(RpmaSessionEnd.Reason.IDLE));
        assertThat(this.harness.statistics().sessionsEnded(RpmaSessionEnd.Reason.IDLE)).isEqualTo(1);
    }

    @Test
    void aSessionTheApplicationClosesWaitsForItsClosedAndIsDeletedOnItsLoop() {
        this.harness.startRaw((message, session) -> {
            session.close();
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        client.deliver(u64(1));
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(client.isDeleted()).isTrue();
        assertThat(client.deletedOnThread()).isEqualTo("rpma-loop-0");
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CLOSED_BY_SERVER);
        assertThat(this.harness.established.get(0).state()).isEqualTo(RpmaSessionState.CLOSED);
    }

    @Test
    void aSessionWhoseClosedNeverComesIsDeletedAfterTheDisconnectTimeout() {
        this.harness.fake.closedOnDisconnect(false);
        this.harness.startRaw((message, session) -> null);
        FakeConnection client = this.harness.connectOne();
        this.harness.established.get(0).close();
        this.harness.await("the disconnect", () -> client.disconnects() == 1);
        assertThat(client.isDeleted()).isFalse();
        this.harness.await("the end after the timeout", () -> this.harness.ended.size() == 1);
        assertThat(client.isDeleted()).isTrue();
        assertThat(this.harness.established.get(0).state()).isEqualTo(RpmaSessionState.CLOSED);
    }

    @Test
    void aFailedCompletionOfABrokenQueuePairEndsTheSessionAsLost() {
        this.harness.startRaw((message, session) -> null);
        FakeConnection client = this.harness.connectOne();
        client.completionQueue().queue(new FakeCompletionQueue.Completion(0, 5, 0xFF, 0, 0, 0, 0, 0, 0));
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.LOST);
    }

    @Test
    void aFlushedCompletionWithTheClientsClosedAlreadyThereEndsTheSessionAsClosed() {
        this.harness.startRaw((message, session) -> null);
        FakeConnection client = this.harness.connectOne();
        holdingTheLoop(() -> {
            client.completionQueue().queue(new FakeCompletionQueue.Completion(0, 5, 0xFF, 0, 0, 0, 0, 0, 0));
            client.peerDisconnects();
        });
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CLOSED);
    }

    /** The loop may look at the event fd first: messages that completed before the CLOSED are handled. */
    @Test
    void messagesThatCompletedBeforeTheClientsClosedAreHandledWhicheverFdTheLoopReadsFirst() {
        List<Long> handled = new CopyOnWriteArrayList<>();
        this.harness.startRaw((message, session) -> {
            handled.add(message.getLong(0));
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        holdingTheLoop(() -> {
            // the event fd becomes readable first
            client.peerDisconnects();
            client.deliver(u64(1));
            client.deliver(u64(2));
        });
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(handled).containsExactly(1L, 2L);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CLOSED);
    }

    /** A handler that closes the session while it drains before the client's CLOSED: deleted at once. */
    @Test
    void aHandlerClosingTheSessionWhileItDrainsOnTheClientsClosedDoesNotWaitForAnotherClosed() {
        this.harness.startRaw((message, session) -> {
            session.close();
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        holdingTheLoop(() -> {
            client.peerDisconnects();
            client.deliver(u64(1));
        });
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CLOSED_BY_SERVER);
        // deleted on this CLOSED, not after the disconnect timeout
        assertThat(client.awaitDeleted(Duration.ofSeconds(1))).isTrue();
    }

    @Test
    void messagesOfOneSessionReachAPooledHandlerInOrderOffTheLoop() {
        this.harness.messages = this.harness.messages.withDispatch(RpmaMessageDispatch.POOL, 3);
        List<Long> seen = new CopyOnWriteArrayList<>();
        List<String> threads = new CopyOnWriteArrayList<>();
        this.harness.startRaw((message, session) -> {
            threads.add(Thread.currentThread().getName());
            seen.add(message.getLong(0));
            Thread.sleep(1);
            return message;
        });
        FakeConnection client = this.harness.connectOne();
        for (long i = 0; i < 50; i++) {
            client.deliver(u64(i));
        }
        this.harness.await("every reply", () -> client.sent().size() == 50);
        assertThat(seen).isSorted().hasSize(50);
        assertThat(client.sent()).extracting(ServerHarness::u64).isSorted();
        assertThat(threads).allMatch((name) -> name.startsWith("rpma-default-messages-"));
        this.harness.await("every slot posted again", () -> client.postedReceives() == 8);
    }

    @Test
    void sessionsSpreadOverTheLoopsAndEachStaysOnItsOwn() {
        this.harness.eventLoops = 2;
        Map<Long, Set<String>> threadsBySession = new ConcurrentHashMap<>();
        this.harness.startRaw((message, session) -> {
            threadsBySession.computeIfAbsent(session.id(), (id) -> ConcurrentHashMap.newKeySet())
                .add(Thread.currentThread().getName());
            return message;
        });
        List<FakeConnection> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            clients.add(this.harness.connectOne());
        }
        for (int round = 0; round < 10; round++) {
            clients.forEach((client) -> client.deliver(u64(1)));
        }
        this.harness.await("every reply", () -> clients.stream().allMatch((client) -> client.sent().size() == 10));
        assertThat(threadsBySession).hasSize(4).allSatisfy((id, threads) -> assertThat(threads).hasSize(1));
        assertThat(threadsBySession.values().stream().flatMap(Set::stream).distinct())
            .containsExactlyInAnyOrder("rpma-loop-0", "rpma-loop-1");
    }

    /** Runs {@code actions} while the session's loop is busy, so that what they make readable is seen in one wait. */
    private void holdingTheLoop(Runnable actions) {
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        this.harness.server.eventLoops().get(0).execute(() -> {
            held.countDown();
            try {
                release.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertThat(held.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            actions.run();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            release.countDown();
        }
    }
}
