package dev.rpma.spring.boot.actuate.observation;

import io.micrometer.common.KeyValues;

/**
 * Observation {@value #NAME} with the low-cardinality keys {@code endpoint} and {@code handler}
 * (both bounded: one handler per configured endpoint) and the contextual name
 * {@code "rpma <endpoint>"}. Nothing of the request's private data is recorded.
 */
public class DefaultRpmaHandlerObservationConvention implements RpmaHandlerObservationConvention {

    /** The shared instance. */
    public static final DefaultRpmaHandlerObservationConvention INSTANCE = new DefaultRpmaHandlerObservationConvention();

    /** Name of the observation, and of the timer Micrometer derives from it. */
    public static final String NAME = "rpma.handler.invocation";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(RpmaHandlerObservationContext context) {
        return "rpma " + context.getEndpoint();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(RpmaHandlerObservationContext context) {
        return KeyValues.of("endpoint", context.getEndpoint(), "handler", context.getHandler());
    }
}
