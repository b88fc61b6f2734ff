package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;

import dev.rpma.client.RpmaClient;
import dev.rpma.spring.boot.test.RpmaLoopback;
import dev.rpma.spring.boot.test.RpmaTest;

@RpmaTest
class OrdersTests {

    @Autowired @Qualifier("orders") RpmaClient orders;

    @Autowired RpmaLoopback loopback;

    @Test
    void createsAnOrder() throws Exception {
        assertThat(orders.request("orders.create", "42", String.class).get()).isEqualTo("created 42");
        loopback.assertNoViolations();
    }
}
