package dev.rpma.spring.boot.test.orders;

import org.springframework.stereotype.Component;

import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaSession;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaMessageHandler;

/** The README's quick-start handlers, as written there. */
@Component
class Orders {

    // decides each request (here: accepts it with the catalog's descriptor) and returns at once
    @RpmaConnectionHandler
    void accept(RpmaIncomingRequest request) {
        request.connect(RpmaCommonData.of(request.regionDescriptor("catalog")).encode());
    }

    // one method per route; the return value is the reply, decoded and encoded by a codec
    // (JSON types need Jackson's JsonMapper bean, e.g. from spring-boot-starter-jackson)
    @RpmaMessageHandler(route = "orders.create")
    OrderCreated create(CreateOrder order, RpmaSession session) {
        return new OrderCreated(order.id());
    }

    record CreateOrder(long id) { }

    record OrderCreated(long id) { }
}
