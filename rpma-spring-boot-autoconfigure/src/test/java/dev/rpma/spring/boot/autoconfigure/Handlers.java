package dev.rpma.spring.boot.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.server.RpmaIncomingRequest;

/** Handler beans for the context tests. */
final class Handlers {

    static final byte[] HELLO_CLIENT = "Hello client!\0".getBytes(StandardCharsets.US_ASCII);

    private Handlers() {
    }

    /** Connects every request of the default endpoint, answering like librpma's example 01. */
    static class Greeter {

        final List<String> endpoints = new CopyOnWriteArrayList<>();

        final List<String> threads = new CopyOnWriteArrayList<>();

        @RpmaConnectionHandler
        public void hello(RpmaIncomingRequest request, String endpointName) {
            this.endpoints.add(endpointName);
            this.threads.add(Thread.currentThread().getName());
            request.connect(HELLO_CLIENT);
        }
    }

    /** A second handler of the default endpoint. */
    static class OtherGreeter {

        @RpmaConnectionHandler
        public void hi(RpmaIncomingRequest request) {
            request.reject();
        }
    }

    /** Serves the named endpoints 'replica' (connects) and 'admin' (rejects), telling them apart by name. */
    @RpmaConnectionHandler("replica")
    static class NamedEndpoints {

        final List<String> endpoints = new CopyOnWriteArrayList<>();

        @RpmaConnectionHandler
        public void replica(String endpointName, RpmaIncomingRequest request) {
            this.endpoints.add(endpointName);
            request.connect(HELLO_CLIENT);
        }

        @RpmaConnectionHandler("admin")
        public void admin(RpmaIncomingRequest request, String endpointName) {
            this.endpoints.add(endpointName);
            request.reject();
        }
    }

    /** Connects every request of the endpoint 'replica'. */
    static class Replica {

        @RpmaConnectionHandler("replica")
        public void connect(RpmaIncomingRequest request) {
            request.connect();
        }
    }

    /** A handler for an endpoint nobody configured. */
    static class Stray {

        @RpmaConnectionHandler("replcia")
        public void stray(RpmaIncomingRequest request) {
            request.reject();
        }
    }
}
