package dev.rpma.spring.boot.actuate.observation;

import java.nio.ByteBuffer;
import java.util.concurrent.Callable;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaServerObserver;
import dev.rpma.server.RpmaSession;

/**
 * Wraps each connection handler invocation, and each message handler invocation whose frame carried a
 * client's trace context, in an {@link Observation}: started before the handler runs, in scope on the
 * handler thread while it runs (so a tracer's span is current and log correlation works), marked with
 * the handler's exception, stopped when it returns. A traced message's observation has the client's
 * span as its remote parent (extracted by the tracer's propagator from the W3C traceparent). Messages
 * without a trace context are not observed one by one: {@code rpma.message.handler.duration} times them.
 */
public class RpmaHandlerObservations implements RpmaServerObserver {

    private final ObservationRegistry registry;

    private final @Nullable RpmaHandlerObservationConvention convention;

    private final @Nullable RpmaMessageObservationConvention messageConvention;

    /**
     * @param convention replaces the default convention of connection handlers; {@code null} keeps it
     * @param messageConvention replaces the default convention of message handlers; {@code null} keeps it
     */
    public RpmaHandlerObservations(ObservationRegistry registry, @Nullable RpmaHandlerObservationConvention convention,
            @Nullable RpmaMessageObservationConvention messageConvention) {
        this.registry = registry;
        this.convention = convention;
        this.messageConvention = messageConvention;
    }

    @Override
    public <T> T handle(RpmaIncomingRequest request, String handlerName, Callable<T> invocation) throws Exception {
        RpmaHandlerObservationContext context = new RpmaHandlerObservationContext(request, handlerName);
        return Observation
            .createNotStarted(this.convention, DefaultRpmaHandlerObservationConvention.INSTANCE, () -> context,
                    this.registry)
            .observeChecked(invocation::call);
    }

    @Override
    public @Nullable Object handleTraced(String endpoint, RpmaMessageListener handler, String traceParent,
            ByteBuffer message, RpmaSession session) throws Exception {
        RpmaMessageObservationContext context = new RpmaMessageObservationContext(endpoint, handler.name(), traceParent);
        return Observation
            .createNotStarted(this.messageConvention, DefaultRpmaMessageObservationConvention.INSTANCE, () -> context,
                    this.registry)
            .observeChecked(() -> handler.onMessage(message, session));
    }
}
