package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import dev.rpma.jna.RpmaException;
import dev.rpma.spring.server.RpmaEndpointServer;
import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaServerObserver;

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
    public <T> T handle(RpmaIncomingRequest request, String handlerName, Supplier<T> invocation) {
        return handle(0, request, handlerName, invocation);
    }

    private <T> T handle(int index, RpmaIncomingRequest request, String handlerName, Supplier<T> invocation) {
        if (index == this.observers.size()) {
            return invocation.get();
        }
        return this.observers.get(index).handle(request, handlerName, () -> handle(index + 1, request, handlerName, invocation));
    }

    @Override
    public void endpointCreated(RpmaEndpointServer server) {
        this.observers.forEach((observer) -> observer.endpointCreated(server));
    }

    @Override
    public void error(String endpoint, RpmaException error) {
        this.observers.forEach((observer) -> observer.error(endpoint, error));
    }
}
