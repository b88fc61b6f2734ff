package dev.rpma.spring.boot.actuate.observation;

import io.micrometer.common.KeyValues;

/**
 * Observation {@value #NAME} with the low-cardinality keys {@code endpoint} and {@code handler} (both
 * bounded: the configured endpoints and their handler methods) and the contextual name
 * {@code "rpma <handler>"}. Nothing of the message is recorded.
 */
public class DefaultRpmaMessageObservationConvention implements RpmaMessageObservationConvention {

    /** The shared instance. */
    public static final DefaultRpmaMessageObservationConvention INSTANCE = new DefaultRpmaMessageObservationConvention();

    /** Name of the observation, and of the timer Micrometer derives from it. */
    public static final String NAME = "rpma.message.handler.invocation";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(RpmaMessageObservationContext context) {
        return "rpma " + context.getHandler();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(RpmaMessageObservationContext context) {
        return KeyValues.of("endpoint", context.getEndpoint(), "handler", context.getHandler());
    }
}
