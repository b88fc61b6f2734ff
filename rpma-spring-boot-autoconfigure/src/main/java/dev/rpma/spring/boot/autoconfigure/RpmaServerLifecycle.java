package dev.rpma.spring.boot.autoconfigure;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

import dev.rpma.spring.annotation.RpmaHandlerRegistry;
import dev.rpma.spring.server.RpmaServer;

/**
 * Starts accepting once the context is refreshed and stops gracefully with it.
 *
 * <p>Grace period ({@code rpma.server.shutdown.grace-period}), in one place: on stop, each endpoint
 * stops taking requests and rejects the queued ones, then waits for running handlers and open
 * connections up to the grace period (negative: forever; zero: not at all), then rejects what is
 * undecided, disconnects and deletes the remaining connections, shuts the endpoint down on its owner
 * thread, and finally deletes the peers. Stopping is asynchronous ({@link #stop(Runnable)}), in the
 * same phase as web servers' graceful shutdown; Spring waits at most
 * {@code spring.lifecycle.timeout-per-shutdown-phase} (30s by default) for it. If that passes first,
 * the context goes on destroying its beans and the server's {@code close()} waits for the rest of the
 * stop, so keep the grace period below that timeout. Once stopped, the server cannot start again.
 */
public class RpmaServerLifecycle implements SmartLifecycle {

    /** Started late and stopped early, like Spring Boot's web server graceful shutdown. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

    private final RpmaServer server;

    private final RpmaHandlerRegistry handlers;

    private final ApplicationEventPublisher publisher;

    private volatile boolean running;

    private volatile boolean stopped;

    public RpmaServerLifecycle(RpmaServer server, RpmaHandlerRegistry handlers, ApplicationEventPublisher publisher) {
        this.server = server;
        this.handlers = handlers;
        this.publisher = publisher;
    }

    @Override
    public void start() {
        if (this.stopped) {
            // the server released its endpoints and peers when it stopped; claiming to run would be a lie
            throw new IllegalStateException("The RDMA server cannot be started again once it has stopped");
        }
        this.handlers.validate(this.server.endpoints().keySet());
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
