package com.example.orders;

import org.springframework.stereotype.Component;

import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaMessageHandler;

@Component
class Orders {

    @RpmaConnectionHandler
    void accept(RpmaIncomingRequest request) {
        request.connect();
    }

    @RpmaMessageHandler(route = "orders.create")
    String create(String order) {
        return "created " + order;
    }
}
