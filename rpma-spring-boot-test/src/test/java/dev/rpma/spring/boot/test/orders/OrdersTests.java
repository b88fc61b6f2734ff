package dev.rpma.spring.boot.test.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;

import dev.rpma.client.RpmaClient;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.spring.boot.test.RpmaLoopback;
import dev.rpma.spring.boot.test.RpmaTest;
import dev.rpma.spring.boot.test.orders.Orders.CreateOrder;
import dev.rpma.spring.boot.test.orders.Orders.OrderCreated;

/** The README's testing example, and more of the same over the loopback. */
@RpmaTest(properties = { "rpma.client.servers.orders.address=198.18.0.1", "rpma.client.servers.orders.port=7204" })
class OrdersTests {

    @Autowired @Qualifier("orders") RpmaClient orders;

    @Autowired RpmaLoopback loopback;

    @Test
    void createsAnOrder() throws Exception {
        assertThat(orders.request("orders.create", new CreateOrder(7), OrderCreated.class).get())
            .isEqualTo(new OrderCreated(7));
        loopback.assertNoViolations();   // no librpma rule broken on the way
    }

    @Test
    void answersAThousandRequestsInFlightEachWithItsOwnReply() {
        List<CompletableFuture<OrderCreated>> replies = LongStream.range(0, 1000)
            .mapToObj(id -> this.orders.request("orders.create", new CreateOrder(id), OrderCreated.class))
            .toList();
        for (int id = 0; id < replies.size(); id++) {
            assertThat(replies.get(id)).succeedsWithin(Duration.ofSeconds(30)).isEqualTo(new OrderCreated(id));
        }
        this.loopback.assertNoViolations();
    }

    @Test
    void theAcceptCarriesTheCatalogsDescriptor() {
        assertThat(this.orders.request("orders.create", new CreateOrder(1), OrderCreated.class))
            .succeedsWithin(Duration.ofSeconds(30));
        RpmaCommonData accepted = this.orders.connection().commonData();
        assertThat(accepted).isNotNull();
        assertThat(accepted.memoryRegionDescriptor()).hasSize(21);
        assertThat(this.loopback.connections()).isNotEmpty()
            .allSatisfy(connection -> assertThat(connection.port()).isEqualTo(7204));
    }
}
