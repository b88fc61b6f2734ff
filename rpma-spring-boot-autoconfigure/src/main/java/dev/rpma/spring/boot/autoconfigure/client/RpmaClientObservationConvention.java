package dev.rpma.spring.boot.autoconfigure.client;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of the observation of a client request; declare a bean of this type to replace
 * {@link DefaultRpmaClientObservationConvention}.
 */
public interface RpmaClientObservationConvention extends ObservationConvention<RpmaClientObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof RpmaClientObservationContext;
    }
}
