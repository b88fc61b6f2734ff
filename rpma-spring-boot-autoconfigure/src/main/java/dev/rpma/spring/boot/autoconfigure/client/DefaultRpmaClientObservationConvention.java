package dev.rpma.spring.boot.autoconfigure.client;

import io.micrometer.common.KeyValues;

import dev.rpma.client.RpmaClientObserver;

/**
 * Observation {@value #NAME}, with the contextual name (the span's) {@code "rpma <route>"}, and the
 * low-cardinality keys {@code client}, {@code server} ({@code address:port}), {@code route}
 * ({@code none} in raw mode) and {@code outcome} (as {@link RpmaClientObserver.Outcome#tag()};
 * {@code unknown} while the request is in flight), all bounded by the configuration and the server's
 * routes. Nothing of a payload is recorded.
 */
public class DefaultRpmaClientObservationConvention implements RpmaClientObservationConvention {

    /** The shared instance. */
    public static final DefaultRpmaClientObservationConvention INSTANCE = new DefaultRpmaClientObservationConvention();

    /** Name of the observation, and of the timer Micrometer derives from it. */
    public static final String NAME = "rpma.client.requests";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(RpmaClientObservationContext context) {
        return "rpma " + (context.getRoute().isEmpty() ? context.getClient() : context.getRoute());
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(RpmaClientObservationContext context) {
        RpmaClientObserver.Outcome outcome = context.getOutcome();
        return KeyValues.of("client", context.getClient(), "server", context.getServer(), "route",
                RpmaClientMetrics.routeTag(context.getRoute()), "outcome", (outcome != null) ? outcome.tag() : "unknown");
    }
}
