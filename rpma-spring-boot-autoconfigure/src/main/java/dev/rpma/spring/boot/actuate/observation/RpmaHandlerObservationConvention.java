package dev.rpma.spring.boot.actuate.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of the observation around a handler invocation; declare a bean of this type
 * to replace {@link DefaultRpmaHandlerObservationConvention}.
 */
public interface RpmaHandlerObservationConvention extends ObservationConvention<RpmaHandlerObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof RpmaHandlerObservationContext;
    }
}
