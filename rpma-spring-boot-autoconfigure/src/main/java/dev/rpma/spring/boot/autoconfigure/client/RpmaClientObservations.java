package dev.rpma.spring.boot.autoconfigure.client;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import dev.rpma.client.RpmaClientObserver;
import dev.rpma.client.RpmaRequestObserver;

/**
 * An {@link Observation} per client request: started on the calling thread (what is current there is
 * its parent), stopped with the request's outcome and failure on the client's loop. With a tracer,
 * its propagator writes the W3C traceparent into the context, and the client sends it in the frame
 * header, so that the server's handler span is the child of this one.
 */
public class RpmaClientObservations implements RpmaRequestObserver {

    private final ObservationRegistry registry;

    private final @Nullable RpmaClientObservationConvention convention;

    /** @param convention replaces the default convention; {@code null} keeps it */
    public RpmaClientObservations(ObservationRegistry registry, @Nullable RpmaClientObservationConvention convention) {
        this.registry = registry;
        this.convention = convention;
    }

    @Override
    public @Nullable Observed start(String client, String server, String route) {
        if (this.registry.isNoop()) {
            return null;
        }
        RpmaClientObservationContext context = new RpmaClientObservationContext(client, server, route);
        Observation observation = Observation.createNotStarted(this.convention,
                DefaultRpmaClientObservationConvention.INSTANCE, () -> context, this.registry);
        if (observation.isNoop()) {
            return null;
        }
        return new ObservedRequest(observation.start(), context);
    }

    private record ObservedRequest(Observation observation, RpmaClientObservationContext context) implements Observed {

        @Override
        public byte @Nullable [] traceParent() {
            return this.context.traceParent();
        }

        @Override
        public void stop(RpmaClientObserver.Outcome outcome, @Nullable Throwable failure) {
            this.context.setOutcome(outcome);
            if (failure != null) {
                this.observation.error(failure);
            }
            this.observation.stop();
        }
    }
}
