package dev.rpma.server;

import static dev.rpma.server.ServerHarness.u64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.binding.testing.FakeSharedReceiveQueue;

/**
 * A raw endpoint whose sessions receive through one shared receive queue per event loop, over the
 * scripted fake (which models the queue, its receive completion queue and the queue pair numbers
 * its completions carry): messages reach the right session, every slot goes back to the queue
 * whatever becomes of its session, and the queue is deleted after the last connection made with it.
 */
class SharedReceiveQueueTest {

    private static final int SLOTS = 16;

    private final ServerHarness harness = new ServerHarness();

    SharedReceiveQueueTest() {
        this.harness.messages = this.harness.messages.withSharedReceiveSlots(SLOTS);
    }

    @AfterEach
    void nothingLeaks() {
        this.harness.closeAndAssertNothingLeaked();
    }

    private FakeSharedReceiveQueue queue() {
        return this.harness.fake.sharedReceiveQueues().get(0);
    }

    @Test
    void theMessagesOfSeveralSessionsGoThroughOneQueueAndEachReplyToItsOwnClient() {
        this.harness.startRaw((message, session) -> session.newMessage().putLong(message.getLong(0) + 1).flip());
        assertThat(this.harness.fake.sharedReceiveQueues()).as("one queue for the one loop").hasSize(1);
        assertThat(queue().postedReceives()).as("every slot posted before the first request").isEqualTo(SLOTS);
        List<FakeConnection> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clients.add(this.harness.connectOne());
        }
        for (FakeConnection client : clients) {
            assertThat(client.request().receives()).as("no receive of its own").isEmpty();
            assertThat(client.config().srq()).isEqualTo(queue().handle());
        }
        for (long round = 0; round < 40; round++) {
            for (int c = 0; c < clients.size(); c++) {
                clients.get(c).deliver(u64(c * 1000 + round));
            }
        }
        this.harness.await("every reply", () -> clients.stream().allMatch((client) -> client.sent().size() == 40));
        for (int c = 0; c < clients.size(); c++) {
            long base = c * 1000;
            assertThat(clients.get(c).sent()).extracting(ServerHarness::u64)
                .as("client %d gets the replies to its own messages, in order", c)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, 40).map((r) -> base + r + 1).boxed()
                    .toList());
        }
        this.harness.await("every slot back in the queue", () -> queue().postedReceives() == SLOTS);
        assertThat(this.harness.statistics().messagesReceived()).isEqualTo(120);
    }

    @Test
    void moreMessagesThanSlotsWaitForTheSlotsToComeBackAndNoneIsLost() {
        this.harness.startRaw((message, session) -> message);
        FakeConnection a = this.harness.connectOne();
        FakeConnection b = this.harness.connectOne();
        for (long i = 0; i < 5 * SLOTS; i++) {
            a.deliver(u64(i));
            b.deliver(u64(i));
        }
        this.harness.await("every echo", () -> a.sent().size() == 5 * SLOTS && b.sent().size() == 5 * SLOTS);
        assertThat(a.sent()).extracting(ServerHarness::u64).isSorted();
        assertThat(queue().undelivered()).isZero();
    }

    @Test
    void theSlotsAreRegisteredForReceivesOnlyAndTheSessionsBlocksHoldOnlySendSlots() {
        this.harness.startRaw((message, session) -> message);
        this.harness.connectOne();
        // 16 shared slots of 64 bytes; one chunk of 16 sessions' 8 send slots of 64 bytes
        assertThat(this.harness.fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL)).hasSize(2);
        assertThat(this.harness.served().registeredBufferBytes()).isEqualTo(SLOTS * 64 + 16 * 8 * 64);
        assertThat(this.harness.fake.callLog()).filteredOn((call) -> call.function().equals("rpma_mr_reg"))
            .extracting((call) -> (int) call.args()[3])
            .as("the queue's slots at listen, the sessions' send slots at the first accept")
            .containsExactly(MemoryUsage.RECV.flag(), MemoryUsage.SEND.flag());
    }

    @Test
    void aMessageThatArrivesBeforeTheServerReadsItsEstablishedWaitsForItsSession() {
        this.harness.fake.establishOnConnect(false);
        this.harness.startRaw((message, session) -> message);
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the connect", () -> request.connection() != null);
        FakeConnection client = request.connection();
        client.deliver(u64(42));
        this.harness.await("its completion taken and held", () -> queue().receiveCompletionQueue().pending() == 0);
        assertThat(client.sent()).isEmpty();
        client.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        this.harness.await("the reply once established", () -> client.sent().size() == 1);
        assertThat(u64(client.sent().get(0))).isEqualTo(42);
        this.harness.await("the slot back", () -> queue().postedReceives() == SLOTS);
    }

    @Test
    void aMessageLargerThanASlotEndsOnlyItsSessionAndItsSlotGoesBack() {
        this.harness.startRaw((message, session) -> message);
        FakeConnection bad = this.harness.connectOne();
        FakeConnection good = this.harness.connectOne();
        bad.deliver(new byte[65]);
        this.harness.await("the bad session's end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).detail()).contains("larger than the 64 bytes a receive takes");
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.OVERSIZED)).isEqualTo(1);
        good.deliver(u64(5));
        this.harness.await("the good one still served", () -> good.sent().size() == 1);
        this.harness.await("every slot back", () -> queue().postedReceives() == SLOTS);
    }

    @Test
    void anEmptyMessageEndsOnlyItsSessionAndItsSlotGoesBack() {
        this.harness.startRaw((message, session) -> message);
        this.harness.connectOne().deliver(new byte[0]);
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.statistics().badMessages(RpmaEndpointStatistics.BadMessage.EMPTY)).isEqualTo(1);
        this.harness.await("the slot back", () -> queue().postedReceives() == SLOTS);
    }

    @Test
    void messagesWaitingForAPooledHandlerGiveTheirSlotsBackWhenTheirSessionEnds() throws InterruptedException {
        this.harness.messages = this.harness.messages.withDispatch(RpmaMessageDispatch.POOL, 2);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        this.harness.startRaw((message, session) -> {
            entered.countDown();
            release.await();
            return message;
        });
        FakeConnection client = this.harness.connectOne();
        for (long i = 0; i < 4; i++) {
            client.deliver(u64(i));
        }
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        this.harness.await("the others waiting for the pool", () -> queue().postedReceives() == SLOTS - 4);
        // the meter counts a receive as filled once the loop took its completion, a little after the device
        this.harness.await("the meter reading the same",
                () -> this.harness.served().sharedReceivesPosted() == SLOTS - 4);
        client.peerDisconnects();
        this.harness.await("the session ended", () -> this.harness.ended.size() == 1);
        this.harness.await("the waiting ones' slots back", () -> queue().postedReceives() == SLOTS - 1);
        release.countDown();
        this.harness.await("the handled one's slot back", () -> queue().postedReceives() == SLOTS);
        this.harness.await("the meter agrees", () -> this.harness.served().sharedReceivesPosted() == SLOTS);
    }

    @Test
    void aClientFloodingASlowPooledHandlerEndsAsCapacityBeforeItHoldsTheQueue() throws InterruptedException {
        this.harness.messages = this.harness.messages.withDispatch(RpmaMessageDispatch.POOL, 2).withSlots(4, 8);
        CountDownLatch release = new CountDownLatch(1);
        this.harness.startRaw((message, session) -> {
            release.await();
            return null;
        });
        FakeConnection flood = this.harness.connectOne();
        for (long i = 0; i < SLOTS; i++) {
            flood.deliver(u64(i));
        }
        this.harness.await("the flood's end", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CAPACITY);
        assertThat(this.harness.ended.get(0).detail()).contains("more than 4 messages waited for the message pool");
        release.countDown();
        this.harness.await("every slot back", () -> queue().postedReceives() == SLOTS);
    }

    @Test
    void aQueueForEachLoopAndEachSessionReceivesThroughItsLoopsQueue() {
        this.harness.eventLoops = 2;
        java.util.Map<Long, String> loopOf = new java.util.concurrent.ConcurrentHashMap<>();
        this.harness.startRaw((message, session) -> {
            loopOf.put(session.id(), Thread.currentThread().getName());
            return message;
        });
        List<FakeSharedReceiveQueue> queues = this.harness.fake.sharedReceiveQueues();
        assertThat(queues).hasSize(2);
        List<FakeConnection> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            clients.add(this.harness.connectOne());
        }
        assertThat(clients).extracting((client) -> client.config().srq())
            .as("spread over both loops' queues")
            .containsOnly(queues.get(0).handle(), queues.get(1).handle())
            .contains(queues.get(0).handle(), queues.get(1).handle());
        for (FakeConnection client : clients) {
            client.deliver(u64(1));
        }
        this.harness.await("every echo", () -> clients.stream().allMatch((client) -> client.sent().size() == 1));
        assertThat(loopOf.values()).containsOnly("rpma-loop-0", "rpma-loop-1").hasSize(4);
        for (int i = 0; i < clients.size(); i++) {
            int queueIndex = (clients.get(i).config().srq() == queues.get(0).handle()) ? 0 : 1;
            assertThat(loopOf.get(this.harness.established.get(i).id())).isEqualTo("rpma-loop-" + queueIndex);
        }
    }

    @Test
    void aClientThatLeavesBeforeItsSessionStartsHasItsMessageSlotBackAfterTheTimeout() {
        this.harness.fake.establishOnConnect(false);
        this.harness.startRaw((message, session) -> message);
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the connect", () -> request.connection() != null);
        FakeConnection client = request.connection();
        client.deliver(u64(1));
        client.peerDisconnects();
        this.harness.await("the session ended", () -> this.harness.ended.size() == 1);
        assertThat(queue().postedReceives()).isEqualTo(SLOTS - 1);
        assertThat(this.harness.fake.await(SharedReceives.UNCLAIMED_TIMEOUT.plus(ServerHarness.WAIT),
                () -> queue().postedReceives() == SLOTS)).as("the unclaimed slot back").isTrue();
        assertThat(client.sent()).isEmpty();
    }

    @Test
    void aQueueTheDeviceRefusesFailsTheListenNamingThePropertyAndNothingIsLeft() {
        this.harness.fake.failNext("rpma_srq_new", dev.rpma.binding.RpmaError.PROVIDER.code(), dev.rpma.binding.Errno.EINVAL);
        org.assertj.core.api.Assertions.assertThatIllegalStateException()
            .isThrownBy(() -> this.harness.startRaw((message, session) -> message))
            .withMessageContaining("cannot have a shared receive queue of " + SLOTS + " slots")
            .withMessageContaining("rpma_srq_new")
            .withMessageContaining("lower messages.shared-receive-slots");
        this.harness.fake.assertAllFreed();
    }

    @Test
    void framedModeHasNoSharedQueueSinceItsCreditsAreASessionsOwnReceives() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> RpmaEndpointSettings.Messages.DEFAULTS.withSharedReceiveSlots(SLOTS))
            .withMessageContaining("raw mode only");
    }

    @Test
    void aSharedCompletionChannelIsRefusedAtListenAndNothingIsLeft() {
        RpmaServerSettings settings = new RpmaServerSettings(1, Duration.ZERO, Duration.ZERO,
                RpmaServerSettings.DEFAULT_SHUTDOWN_TIMEOUT,
                List.of(this.harness.settings()), List.of());
        FakeLibRpma fake = this.harness.fake;
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaServer.listen(Rpma.using(fake), settings,
                new RpmaServer.Components() {

                    @Override
                    public RpmaRequestHandler handler(String endpoint) {
                        return RpmaIncomingRequest::connect;
                    }

                    @Override
                    public java.util.Map<String, RpmaMessageListener> messageListeners(String endpoint) {
                        return java.util.Map.of("", (message, session) -> null);
                    }

                    @Override
                    public dev.rpma.binding.RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings endpoint,
                            RpmaQueueSizes needed) {
                        return rpma.newConnectionConfig().cqSize(16).sqSize(16).sharedCompletionChannel(true);
                    }
                }))
            .withMessageContaining("share a completion channel");
        fake.assertAllFreed();
    }
}
