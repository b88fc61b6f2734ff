package dev.rpma.spring.server;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.testing.FakeEndpoint;
import dev.rpma.jna.testing.FakeLibRpma;

/**
 * One endpoint server over the scripted fake: the settings tests vary, the server, the fake endpoint
 * to script, and a bounded wait for asynchronous outcomes.
 */
final class ServerHarness implements AutoCloseable {

    static final String ADDRESS = "198.18.0.1";

    static final Duration WAIT = Duration.ofSeconds(10);

    final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    final List<String> events = new CopyOnWriteArrayList<>();

    RpmaServer server;

    FakeEndpoint endpoint;

    int queueCapacity = 8;

    int handlerThreads = 2;

    Duration requestDeadline = Duration.ofSeconds(5);

    Duration gracePeriod = Duration.ofSeconds(5);

    int maxConsecutiveErrors = 10;

    boolean batchHandlerThreads = true;

    ServerHarness start(RpmaRequestHandler handler) {
        listen(handler);
        this.server.start();
        return this;
    }

    /** The server listening, its acceptor not started. */
    ServerHarness listen(RpmaRequestHandler handler) {
        RpmaEndpointSettings settings = new RpmaEndpointSettings(RpmaEndpointSettings.DEFAULT_ENDPOINT, ADDRESS, 7204,
                this.queueCapacity, this.handlerThreads, this.requestDeadline, Duration.ofMillis(50), this.gracePeriod,
                this.maxConsecutiveErrors, false, this.batchHandlerThreads,
                RpmaEndpointSettings.DEFAULT_HANDLER_SPIN_LOOKS);
        this.server = RpmaServer.listen(Rpma.using(this.fake), List.of(settings), new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String endpointName) {
                return handler;
            }

            @Override
            public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings endpoint) {
                return rpma.newConnectionConfig().cqSize(16);
            }

            @Override
            public List<RpmaConnectionEventListener> listeners() {
                return List.of((connection, event) -> ServerHarness.this.events.add(event.name()));
            }
        });
        this.endpoint = this.fake.endpointAt(ADDRESS, 7204);
        return this;
    }

    RpmaEndpointServer endpointServer() {
        return this.server.endpoint(RpmaEndpointSettings.DEFAULT_ENDPOINT);
    }

    RpmaEndpointStatistics statistics() {
        return endpointServer().statistics();
    }

    Thread acceptorThread() {
        return endpointServer().endpoint().owner();
    }

    void await(String what, BooleanSupplier condition) {
        if (!this.fake.await(WAIT, condition)) {
            throw new AssertionError("timed out waiting for " + what + "; violations: " + this.fake.violations());
        }
    }

    /** Stops the server and waits until everything native is released. */
    void stop() {
        if (this.server != null) {
            this.server.close();
        }
    }

    @Override
    public void close() {
        try {
            stop();
        }
        finally {
            this.fake.close();
        }
    }
}
