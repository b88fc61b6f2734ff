package dev.rpma.spring.boot.test.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;

import dev.rpma.client.RpmaClient;
import dev.rpma.spring.boot.test.RpmaTest;

/** The README's example: the application's handlers answer its client over the loopback, no RDMA needed. */
@RpmaTest(properties = { "rpma.server.port=7204", "rpma.client.servers.orders.address=192.0.2.1",
        "rpma.client.servers.orders.port=7204", "rpma.client.servers.orders.private-data=orders" })
class OrdersTests {

    @Autowired
    @Qualifier("orders")
    RpmaClient orders;

    @Test
    void createsAnOrder() throws Exception {
        assertThat(this.orders.request("orders.create", "42", String.class).get()).isEqualTo("created 42");
    }

    @Test
    void answersManyRequestsInFlight() {
        var replies = java.util.stream.IntStream.range(0, 1000)
                .mapToObj(i -> this.orders.request("orders.create", "#" + i, String.class)).toList();
        for (int i = 0; i < replies.size(); i++) {
            assertThat(replies.get(i)).succeedsWithin(Duration.ofSeconds(30)).isEqualTo("created #" + i);
        }
    }
}
