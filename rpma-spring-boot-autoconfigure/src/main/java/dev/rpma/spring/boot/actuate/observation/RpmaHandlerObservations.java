package dev.rpma.spring.boot.actuate.observation;

import java.util.concurrent.Callable;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaServerObserver;

/**
 * Wraps each connection handler invocation in an {@link Observation}: started before the handler runs, in scope
 * on the handler thread while it runs (so a tracer's span is current and log correlation works),
 * marked with the handler's exception, stopped when it returns.
 */
public class RpmaHandlerObservations implements RpmaServerObserver {

    private final ObservationRegistry registry;

    private final RpmaHandlerObservationConvention convention;

    /** @param convention replaces the default convention; {@code null} keeps it */
    public RpmaHandlerObservations(ObservationRegistry registry, RpmaHandlerObservationConvention convention) {
        this.registry = registry;
        this.convention = convention;
    }

    @Override
    public <T> T handle(RpmaIncomingRequest request, String handlerName, Callable<T> invocation) throws Exception {
        RpmaHandlerObservationContext context = new RpmaHandlerObservationContext(request, handlerName);
        return Observation
            .createNotStarted(this.convention, DefaultRpmaHandlerObservationConvention.INSTANCE, () -> context,
                    this.registry)
            .observeChecked(invocation::call);
    }
}
