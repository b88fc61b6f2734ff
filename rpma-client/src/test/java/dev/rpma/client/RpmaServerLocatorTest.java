package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaWireMode;

/**
 * A client of many servers over the scripted fake: its connections ask the locator before each attempt,
 * spread over what it answers, and a connection whose server rejected it or was lost moves to another
 * server; a locator that knows no server yet fails the attempts until it does.
 */
class RpmaServerLocatorTest {

    private static final Duration WAIT = ScriptedServer.WAIT;

    private static final RpmaServerAddress A = new RpmaServerAddress("198.18.0.1", 7204);

    private static final RpmaServerAddress B = new RpmaServerAddress("198.18.3.2", 7204);

    private final FakeLibRpma fake = new FakeLibRpma();

    private RpmaClient client;

    @AfterEach
    void everythingIsFreed() {
        if (this.client != null) {
            this.client.close();
        }
        this.fake.assertCleanAndClose();
    }

    private RpmaClientBuilder builder(RpmaServerLocator locator) {
        return ScriptedServer.clientOf(this.fake).servers(locator).mode(RpmaWireMode.RAW);
    }

    @Test
    void thePoolSpreadsOverTheServersAndARejectedConnectionMovesToTheOther() throws Exception {
        this.fake.establishOnConnect(false);
        RoundRobin locator = new RoundRobin(A, B);
        this.client = builder(locator).poolSize(2).build();
        await("two connection requests", () -> this.fake.connections().size() == 2);
        FakeConnection toA = connectionTo(A, 0);
        FakeConnection toB = connectionTo(B, 0);
        toB.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        toA.queueEvent(RpmaConnectionEvent.REJECTED);

        await("the third connection request", () -> this.fake.connections().size() == 3);
        FakeConnection again = this.fake.connections().get(2);
        assertThat(addressOf(again)).as("the rejected connection asks for another server than A").isEqualTo(B);
        assertThat(locator.previous).containsExactly(null, null, A);
        again.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        await("both established on B",
                () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 2);

        CompletableFuture<byte[]> first = this.client.exchange(new byte[] { 1 });
        CompletableFuture<byte[]> second = this.client.exchange(new byte[] { 2 });
        await("both sent", () -> toB.sent().size() + again.sent().size() == 2);
        toB.deliver(new byte[] { 11 });
        again.deliver(new byte[] { 22 });
        assertThat(List.of(first.get(10, TimeUnit.SECONDS)[0], second.get(10, TimeUnit.SECONDS)[0]))
            .containsExactlyInAnyOrder((byte) 11, (byte) 22);
    }

    @Test
    void aConnectionLostWithItsServerReconnectsToAnotherServer() throws Exception {
        RoundRobin locator = new RoundRobin(A, B);
        this.client = builder(locator).poolSize(2).build();
        await("both established", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 2);
        FakeConnection toA = connectionTo(A, 0);
        connectionTo(B, 0);

        toA.peerDisconnects();
        await("the replacement established", () -> this.fake.connections().size() == 3
                && this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 2);
        assertThat(addressOf(this.fake.connections().get(2))).isEqualTo(B);
        assertThat(locator.previous).last().isEqualTo(A);
    }

    /**
     * Servers reached through two devices (in the soft-RoCE VM, 198.18.0.1 on rxe0 and 198.18.3.2 over
     * the veth pair): each connection is requested on the peer of its server's device, since librdmacm
     * refuses one on another device's peer, and a connection that moves to the other device registers
     * its slots again there. A third address on a device already open shares its peer.
     */
    @Test
    void eachConnectionIsRequestedOnThePeerOfItsServersDevice() throws Exception {
        RpmaServerAddress alsoOnA = new RpmaServerAddress("198.18.0.2", 7204);
        this.fake.sameDevice(alsoOnA.address(), A.address()).establishOnConnect(false);
        RoundRobin locator = new RoundRobin(A, B);
        this.client = builder(locator).poolSize(2).build();
        await("two connection requests", () -> this.fake.connections().size() == 2);
        FakeConnection toA = connectionTo(A, 0);
        assertThat(toA.request().peerDevice()).isEqualTo(A.address());
        assertThat(connectionTo(B, 0).request().peerDevice()).isEqualTo(B.address());
        connectionTo(B, 0).queueEvent(RpmaConnectionEvent.ESTABLISHED);

        toA.queueEvent(RpmaConnectionEvent.REJECTED);
        await("the rejected connection's next request", () -> this.fake.connections().size() == 3);
        FakeConnection moved = this.fake.connections().get(2);
        assertThat(addressOf(moved)).isEqualTo(B);
        assertThat(moved.request().peerDevice()).as("the moved connection's peer").isEqualTo(B.address());
        moved.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        await("both established on B",
                () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 2);
        CompletableFuture<byte[]> reply = this.client.exchange(new byte[] { 1 });
        await("sent", () -> connectionTo(B, 0).sent().size() + moved.sent().size() == 1);
        (moved.sent().isEmpty() ? connectionTo(B, 0) : moved).deliver(new byte[] { 2 });
        assertThat(reply.get(10, TimeUnit.SECONDS)).containsExactly(2);

        locator.servers.set(0, alsoOnA);
        locator.servers.remove(B);
        moved.peerDisconnects();
        await("the connection to the third address", () -> this.fake.connections().size() == 4);
        assertThat(this.fake.lastConnection().request().peerDevice()).isEqualTo(A.address());
        assertThat(this.fake.calls("rpma_peer_new")).as("peers opened, one per device and one given up")
            .isEqualTo(3);
        assertThat(this.fake.calls("rpma_peer_delete")).as("the third address's own peer, given up").isEqualTo(1);
    }

    @Test
    void aLocatorWithoutServersFailsTheAttemptsUntilItKnowsOneAndThePeerWaitsForIt() throws Exception {
        RoundRobin locator = new RoundRobin();
        this.client = builder(locator).backoff(Duration.ofMillis(1), 1.0, Duration.ofMillis(1)).build();
        await("the first attempt", () -> !locator.previous.isEmpty());
        assertThat(this.client.server()).isEqualTo("the test's servers");
        assertThatThrownBy(() -> this.client.exchange(new byte[] { 1 }).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaServerUnreachableException.class).hasMessageContaining("no server is known yet");
        assertThat(this.fake.calls("rpma_utils_get_ibv_context")).as("no device is opened without a server").isZero();

        locator.servers.add(B);
        await("established", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        assertThat(addressOf(this.fake.lastConnection())).isEqualTo(B);
        assertThat(this.fake.calls("rpma_utils_get_ibv_context")).isEqualTo(1);
    }

    @Test
    void aRejectionNamesTheServerThatRejected() {
        this.fake.establishOnConnect(false);
        this.client = builder(new RoundRobin(B)).backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)).build();
        await("the connection request", () -> this.fake.connections().size() == 1);
        CompletableFuture<byte[]> waiting = this.client.exchange(new byte[] { 1 });
        this.fake.lastConnection().queueEvent(RpmaConnectionEvent.REJECTED);
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectRejectedException.class).hasMessageContaining("198.18.3.2:7204");
    }

    @Test
    void anAddressAndALocatorTogetherOrNeitherAreRefused() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> builder(new RoundRobin(A)).address("198.18.0.1").port(7204).build())
            .withMessageContaining("not both");
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaClient.builder(Rpma.using(this.fake)).build())
            .withMessageContaining("got neither");
    }

    private FakeConnection connectionTo(RpmaServerAddress server, int nth) {
        return this.fake.connections().stream().filter((connection) -> addressOf(connection).equals(server))
            .skip(nth).findFirst().orElseThrow(() -> new AssertionError("No connection to " + server));
    }

    private static RpmaServerAddress addressOf(FakeConnection connection) {
        return new RpmaServerAddress(connection.request().address(), Integer.parseInt(connection.request().port()));
    }

    private void await(String what, BooleanSupplier condition) {
        if (!this.fake.await(WAIT, condition)) {
            throw new AssertionError("Waited " + WAIT + " for " + what);
        }
    }

    /** In turn over its servers, never the previous one when there is another; records what it was asked. */
    static final class RoundRobin implements RpmaServerLocator {

        final List<RpmaServerAddress> servers = new CopyOnWriteArrayList<>();

        final List<@Nullable RpmaServerAddress> previous = new CopyOnWriteArrayList<>();

        private int next;

        RoundRobin(RpmaServerAddress... servers) {
            this.servers.addAll(List.of(servers));
        }

        @Override
        public synchronized RpmaServerAddress next(@Nullable RpmaServerAddress previous) {
            this.previous.add(previous);
            if (this.servers.isEmpty()) {
                throw new RpmaServerUnreachableException(toString(), "no server is known yet", null);
            }
            RpmaServerAddress chosen = this.servers.get(this.next++ % this.servers.size());
            if (chosen.equals(previous) && this.servers.size() > 1) {
                chosen = this.servers.get(this.next++ % this.servers.size());
            }
            return chosen;
        }

        @Override
        public String toString() {
            return "the test's servers";
        }
    }
}
