package dev.rpma.spring.boot.test.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaConnectRejectedException;
import dev.rpma.client.RpmaConnectionLostException;
import dev.rpma.client.RpmaRequestOptions;
import dev.rpma.client.RpmaRequestTimeoutException;
import dev.rpma.client.RpmaServerUnreachableException;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaSessionEnd;
import dev.rpma.spring.boot.autoconfigure.client.RpmaClients;
import dev.rpma.spring.boot.test.RpmaLoopback;
import dev.rpma.spring.boot.test.RpmaLoopbackConnection;
import dev.rpma.spring.boot.test.RpmaTest;
import dev.rpma.spring.boot.test.orders.Orders.CreateOrder;
import dev.rpma.spring.boot.test.orders.Orders.OrderCreated;

/**
 * The loopback's faults, seen through the application: each test makes a client of its own (so that
 * its faults reach no other test) and asserts how the client's futures fail, as docs/client.md says,
 * and what the server counts.
 */
@RpmaTest(properties = { "rpma.server.port=7205", "rpma.client.servers.orders.address=192.0.2.1",
        "rpma.client.servers.orders.port=7205",
        "rpma.client.servers.orders.backoff-initial=10s", "rpma.server.shutdown.grace-period=0" })
class LoopbackFaultsTests {

    private static final int PORT = 7205;

    private static final int IBV_WC_RETRY_EXC_ERR = 12;

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Autowired
    RpmaLoopback loopback;

    @Autowired
    RpmaClients clients;

    @Autowired
    RpmaServer server;

    private RpmaClient client;

    @AfterEach
    void close() {
        if (this.client != null) {
            this.client.close();
        }
        this.loopback.assertNoViolations();
    }

    private RpmaClient connectedClient() {
        int before = this.loopback.connections().size();
        this.client = this.clients.create("orders");
        assertThat(this.client.request("orders.create", new CreateOrder(0), OrderCreated.class)).succeedsWithin(WAIT);
        assertThat(this.loopback.connections()).hasSizeGreaterThan(before);
        return this.client;
    }

    private RpmaLoopbackConnection newest() {
        var connections = this.loopback.connections();
        return connections.get(connections.size() - 1);
    }

    private RpmaEndpointStatistics statistics() {
        return this.server.endpoints().values().iterator().next().statistics();
    }

    @Test
    void aRejectedConnectionFailsTheRequestWithTheRejection() {
        this.loopback.rejectNextConnection(PORT);
        this.client = this.clients.create("orders");
        assertThat(this.client.request("orders.create", new CreateOrder(1), OrderCreated.class)).failsWithin(WAIT)
            .withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(RpmaConnectRejectedException.class);
    }

    @Test
    void anUnreachableServerFailsTheRequestAsUnreachable() {
        this.loopback.unreachableNext(PORT);
        this.client = this.clients.create("orders");
        assertThat(this.client.request("orders.create", new CreateOrder(1), OrderCreated.class)).failsWithin(WAIT)
            .withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(RpmaServerUnreachableException.class);
    }

    @Test
    void aLostConnectionFailsTheRequestsInFlightAndTheServerCountsItLost() {
        RpmaClient orders = connectedClient();
        long lostBefore = statistics().sessionsEnded(RpmaSessionEnd.Reason.LOST);
        RpmaLoopbackConnection connection = newest().slowServer(Duration.ofMinutes(1));
        long received = statistics().messagesReceived();
        CompletableFuture<OrderCreated> inFlight = orders.request("orders.create", new CreateOrder(2), OrderCreated.class);
        // sent and received: the server's reply is what the slow side holds back
        assertThat(this.loopback.nativeLayer().await(WAIT, () -> statistics().messagesReceived() > received)).isTrue();
        connection.lose();
        assertThat(inFlight).failsWithin(WAIT)
            .withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(RpmaConnectionLostException.class);
        assertThat(this.loopback.nativeLayer()
            .await(WAIT, () -> statistics().sessionsEnded(RpmaSessionEnd.Reason.LOST) == lostBefore + 1)).isTrue();
    }

    @Test
    void aFailedCompletionOfTheClientsSendFailsItsRequestAsALoss() {
        RpmaClient orders = connectedClient();
        newest().failNextClientCompletion(IBV_WC_RETRY_EXC_ERR);
        assertThat(orders.request("orders.create", new CreateOrder(3), OrderCreated.class)).failsWithin(WAIT)
            .withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(RpmaConnectionLostException.class);
    }

    @Test
    void aSlowServerMakesTheRequestTimeOut() {
        RpmaClient orders = connectedClient();
        newest().slowServer(Duration.ofSeconds(5));
        CompletableFuture<byte[]> slow = orders.request("orders.create", "{\"id\":4}".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                RpmaRequestOptions.DEFAULT.withTimeout(Duration.ofMillis(200)));
        assertThat(slow).failsWithin(WAIT)
            .withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(RpmaRequestTimeoutException.class);
    }
}
