package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import ch.qos.logback.classic.Level;

import dev.rpma.binding.CompletionStatus;
import dev.rpma.binding.testing.FakeCompletionQueue;
import dev.rpma.binding.testing.FakeConnection;

/**
 * A completion with an error status is named by the work request the server posted, which its
 * {@code wr_id} says, and not by its opcode, which verbs leaves undefined on error (often 0,
 * {@code IBV_WC_SEND}, for a failed receive): the session's end, the log line and the counter all
 * say receive or send, and which slot.
 */
class FailedCompletionTest {

    private static final int IBV_WC_SEND = 0;

    private static final int IBV_WC_RECV = 128;

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void aFailedReceiveWhoseOpcodeSaysSendIsLoggedAndCountedAsTheReceive() {
        try (CapturedLog log = new CapturedLog()) {
            this.harness.startRaw((message, session) -> message);
            FakeConnection client = this.harness.connectOne();
            client.completionQueue().queue(failed(3, CompletionStatus.REM_ACCESS_ERR, IBV_WC_SEND));
            this.harness.await("the end", () -> this.harness.ended.size() == 1);
            assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.ERROR);
            assertThat(this.harness.ended.get(0).detail())
                .isEqualTo("the receive in slot 3 completed with IBV_WC_REM_ACCESS_ERR (10)");
            assertThat(log.messages(Level.WARN)).singleElement().asString()
                .endsWith("' ends: the receive in slot 3 completed with IBV_WC_REM_ACCESS_ERR (10)")
                .doesNotContainIgnoringCase("send");
            assertThat(this.harness.statistics().failedCompletions(RpmaEndpointStatistics.WorkRequest.RECEIVE)).isOne();
            assertThat(this.harness.statistics().failedCompletions(RpmaEndpointStatistics.WorkRequest.SEND)).isZero();
        }
    }

    @Test
    void aFailedSendWhoseOpcodeSaysReceiveIsLoggedAndCountedAsTheSend() {
        try (CapturedLog log = new CapturedLog()) {
            this.harness.startRaw((message, session) -> message);
            FakeConnection client = this.harness.connectOne();
            client.completionQueue().queue(failed(SessionDataPath.SEND | 2, CompletionStatus.RNR_RETRY_EXC_ERR,
                    IBV_WC_RECV));
            this.harness.await("the end", () -> this.harness.ended.size() == 1);
            assertThat(this.harness.ended.get(0).detail())
                .isEqualTo("the send in slot 2 completed with IBV_WC_RNR_RETRY_EXC_ERR (13)");
            assertThat(log.messages(Level.WARN)).singleElement().asString()
                .endsWith("' ends: the send in slot 2 completed with IBV_WC_RNR_RETRY_EXC_ERR (13)")
                .doesNotContain("receive");
            assertThat(this.harness.statistics().failedCompletions(RpmaEndpointStatistics.WorkRequest.SEND)).isOne();
            assertThat(this.harness.statistics().failedCompletions(RpmaEndpointStatistics.WorkRequest.RECEIVE)).isZero();
        }
    }

    /** A flush is the connection breaking: lost, not an error, and not counted as a failed completion. */
    @Test
    void aFlushedReceiveEndsTheSessionAsLostNamingTheReceive() {
        this.harness.startRaw((message, session) -> message);
        FakeConnection client = this.harness.connectOne();
        client.completionQueue().queue(failed(5, CompletionStatus.WR_FLUSH_ERR, IBV_WC_SEND));
        this.harness.await("the end", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.LOST);
        assertThat(this.harness.ended.get(0).detail()).isEqualTo("the connection's queue pair failed: the receive in"
                + " slot 5 was flushed (IBV_WC_WR_FLUSH_ERR)");
        assertThat(this.harness.statistics().failedCompletions(RpmaEndpointStatistics.WorkRequest.RECEIVE)).isZero();
    }

    @Test
    void aFailedReceiveOfTheSharedQueueNamesTheSharedQueuesSlot() {
        this.harness.messages = this.harness.messages.withSharedReceiveSlots(16);
        this.harness.startRaw((message, session) -> message);
        FakeConnection client = this.harness.connectOne();
        this.harness.fake.sharedReceiveQueues().get(0).receiveCompletionQueue()
            .queue(new FakeCompletionQueue.Completion(7, CompletionStatus.REM_ACCESS_ERR, IBV_WC_SEND, 0, 0, 0,
                    client.qpNumber(), 0, 0));
        this.harness.await("the end", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).detail()).isEqualTo("the receive in slot 7 of the shared receive queue"
                + " completed with IBV_WC_REM_ACCESS_ERR (10)");
        assertThat(this.harness.statistics().failedCompletions(RpmaEndpointStatistics.WorkRequest.RECEIVE)).isOne();
    }

    private static FakeCompletionQueue.Completion failed(long wrId, int status, int opcode) {
        return new FakeCompletionQueue.Completion(wrId, status, opcode, 0, 0, 0, 0, 0, 0);
    }
}
