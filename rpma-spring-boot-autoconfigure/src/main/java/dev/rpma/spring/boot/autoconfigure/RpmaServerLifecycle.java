package dev.rpma.spring.boot.autoconfigure;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.spring.annotation.RpmaHandlerRegistry;

/**
 * Checks the handlers against the endpoints, listens and starts accepting once the context is
 * refreshed, and stops gracefully with it.
 *
 * <p>Grace period ({@code rpma.server.shutdown.grace-period}), in one place: on stop, every endpoint
 * stops accepting at once (requests not yet decided are rejected as shutdown), the sessions are given
 * the grace period to end by themselves (negative: forever; zero: not at all), then the rest are
 * disconnected and deleted, the memory is deregistered and the peers deleted last. Stopping is
 * asynchronous ({@link #stop(Runnable)}), in the same phase as web servers' graceful shutdown; Spring
 * waits at most {@code spring.lifecycle.timeout-per-shutdown-phase} (30s by default) for it. If that
 * passes first, the context goes on destroying its beans and the server's {@code close()} waits for
 * the rest of the stop, so keep the grace period below that timeout. Once stopped, the server cannot
 * start again.
 */
public class RpmaServerLifecycle implements SmartLifecycle {

    /** Started late and stopped early, like Spring Boot's web server graceful shutdown. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

    private final RpmaServer server;

    private final RpmaHandlerRegistry handlers;

    private final Supplier<List<RpmaMessageCodec>> codecs;

    private final ApplicationEventPublisher publisher;

    private volatile boolean running;

    private volatile boolean stopped;

    public RpmaServerLifecycle(RpmaServer server, RpmaHandlerRegistry handlers, Supplier<List<RpmaMessageCodec>> codecs,
            ApplicationEventPublisher publisher) {
        this.server = server;
        this.handlers = handlers;
        this.codecs = codecs;
        this.publisher = publisher;
    }

    @Override
    public void start() {
        if (this.stopped) {
            // the server released its endpoints and peers when it stopped; claiming to run would be a lie
            throw new IllegalStateException("The RDMA server cannot be started again once it has stopped");
        }
        Map<String, RpmaWireMode> endpoints = new LinkedHashMap<>();
        for (RpmaEndpointSettings endpoint : this.server.settings().endpoints()) {
            endpoints.put(endpoint.name(), endpoint.messages().mode());
        }
        // before anything native: a handler that does not fit fails here, not after a listen or a missing device
        this.handlers.resolve(endpoints, this.codecs.get());
        this.server.start();
        this.running = true;
        this.publisher.publishEvent(new RpmaServerStartedEvent(this.server));
    }

    @Override
    public void stop() {
        throw new UnsupportedOperationException("Stop must not be invoked directly");
    }

    @Override
    public void stop(Runnable callback) {
        this.running = false;
        this.stopped = true;
        this.server.stop(() -> {
            try {
                this.publisher.publishEvent(new RpmaServerStoppedEvent(this.server));
            }
            finally {
                // a failing listener must not leave Spring waiting for the whole shutdown phase
                callback.run();
            }
        });
    }

    @Override
    public boolean isRunning() {
        return this.running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
