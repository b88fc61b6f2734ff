package dev.rpma.spring.boot.test.orders;

import org.springframework.stereotype.Component;

import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaSession;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaMessageHandler;

/** A connection handler that accepts whoever says "orders" and a message handler with one route. */
@Component
class Orders {

    @RpmaConnectionHandler
    void accept(RpmaIncomingRequest request) {
        if (new String(request.privateData(), java.nio.charset.StandardCharsets.UTF_8).equals("orders")) {
            request.connect();
        }
        else {
            request.reject();
        }
    }

    @RpmaMessageHandler(route = "orders.create")
    String create(String order, RpmaSession session) {
        return "created " + order;
    }
}
