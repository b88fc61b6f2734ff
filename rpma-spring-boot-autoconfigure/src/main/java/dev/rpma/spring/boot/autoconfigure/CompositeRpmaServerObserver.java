package dev.rpma.spring.boot.autoconfigure;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.RpmaException;
import dev.rpma.server.loop.RpmaEventLoop;
import dev.rpma.server.RpmaServedEndpoint;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaServerObserver;
import dev.rpma.server.RpmaSession;

/** Every {@link RpmaServerObserver} bean, in order; the first wraps the others. */
final class CompositeRpmaServerObserver implements RpmaServerObserver {

    private final List<RpmaServerObserver> observers;

    private CompositeRpmaServerObserver(List<RpmaServerObserver> observers) {
        this.observers = observers;
    }

    static RpmaServerObserver of(List<RpmaServerObserver> observers) {
        if (observers.isEmpty()) {
            return RpmaServerObserver.NONE;
        }
        return (observers.size() == 1) ? observers.get(0) : new CompositeRpmaServerObserver(List.copyOf(observers));
    }

    @Override
    public void queueWait(String endpoint, Duration wait) {
        this.observers.forEach((observer) -> observer.queueWait(endpoint, wait));
    }

    @Override
    public <T> T handle(RpmaIncomingRequest request, String handlerName, Callable<T> invocation) throws Exception {
        return handle(0, request, handlerName, invocation);
    }

    private <T> T handle(int index, RpmaIncomingRequest request, String handlerName, Callable<T> invocation)
            throws Exception {
        if (index == this.observers.size()) {
            return invocation.call();
        }
        return this.observers.get(index).handle(request, handlerName, () -> handle(index + 1, request, handlerName, invocation));
    }

    @Override
    public @Nullable Object handleTraced(String endpoint, RpmaMessageListener handler, String traceParent,
            ByteBuffer message, RpmaSession session) throws Exception {
        return handleTraced(0, endpoint, handler, traceParent, message, session);
    }

    private @Nullable Object handleTraced(int index, String endpoint, RpmaMessageListener handler, String traceParent,
            ByteBuffer message, RpmaSession session) throws Exception {
        if (index == this.observers.size()) {
            return handler.onMessage(message, session);
        }
        RpmaMessageListener next = new RpmaMessageListener() {

            @Override
            public @Nullable Object onMessage(ByteBuffer nextMessage, RpmaSession nextSession) throws Exception {
                return handleTraced(index + 1, endpoint, handler, traceParent, nextMessage, nextSession);
            }

            @Override
            public String name() {
                return handler.name();
            }
        };
        return this.observers.get(index).handleTraced(endpoint, next, traceParent, message, session);
    }

    @Override
    public void endpointCreated(RpmaServedEndpoint endpoint) {
        this.observers.forEach((observer) -> observer.endpointCreated(endpoint));
    }

    @Override
    public void loopsCreated(List<RpmaEventLoop> loops) {
        this.observers.forEach((observer) -> observer.loopsCreated(loops));
    }

    @Override
    public void messageHandled(String endpoint, String handlerName, long nanos, boolean failed) {
        for (RpmaServerObserver observer : this.observers) {
            observer.messageHandled(endpoint, handlerName, nanos, failed);
        }
    }

    @Override
    public void error(String endpoint, RpmaException error) {
        this.observers.forEach((observer) -> observer.error(endpoint, error));
    }
}
