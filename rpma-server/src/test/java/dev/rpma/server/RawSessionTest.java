package dev.rpma.server;

import static dev.rpma.server.ServerHarness.u64;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.jna.testing.FakeConnection;

/**
 * The data path of a raw endpoint over the scripted fake: messages reach the handler from their
 * registered receive slot, replies go back from a send slot, and every slot is posted again.
 */
class RawSessionTest {

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void nothingLeaks() {
        this.harness.stop();
        try {
            this.harness.fake.assertNoViolations();
            this.harness.fake.assertAllFreed();
        }
        finally {
            this.harness.fake.close();
        }
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
        assertThat(this.harness.statistics().messagesSent()).isEqualTo(100);
        assertThat(this.harness.statistics().bytesReceived()).isEqualTo(800);
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
        this.harness.await("the delete", client::isDeleted);
        assertThat(client.deletedOnThread()).isEqualTo("rpma-loop-0");
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
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
}
