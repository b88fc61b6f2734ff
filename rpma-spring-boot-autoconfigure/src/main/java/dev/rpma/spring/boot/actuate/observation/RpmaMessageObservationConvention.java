package dev.rpma.spring.boot.actuate.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of the observation around a traced message handler invocation; declare a bean
 * of this type to replace {@link DefaultRpmaMessageObservationConvention}.
 */
public interface RpmaMessageObservationConvention extends ObservationConvention<RpmaMessageObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof RpmaMessageObservationContext;
    }
}
