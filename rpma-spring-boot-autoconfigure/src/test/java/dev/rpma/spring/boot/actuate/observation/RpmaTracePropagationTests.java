package dev.rpma.spring.boot.actuate.observation;

import static dev.rpma.spring.boot.actuate.FakeRpmaServer.ADDRESS;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.PORT;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;

import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.client.RpmaClient;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaMessageHandler;
import dev.rpma.spring.boot.actuate.Await;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.spring.boot.autoconfigure.client.RpmaClientAutoConfiguration;

/**
 * The trace context end to end over the scripted fake: an auto-configured client calls the
 * auto-configured server in the same context, their connections joined frame by frame, both observed
 * through one registry with micrometer-tracing's {@link SimpleTracer} and a W3C propagator. The
 * server's message handler span is the child of the client's request span: same trace id, the
 * client's span id as its parent, current on the handler's thread.
 */
class RpmaTracePropagationTests {

    private final FakeLibRpma fake = new FakeLibRpma();

    private final SimpleTracer tracer = new SimpleTracer();

    private final TestObservationRegistry observations = TestObservationRegistry.create();

    private volatile boolean bridging = true;

    RpmaTracePropagationTests() {
        W3cPropagator propagator = new W3cPropagator(this.tracer);
        this.observations.observationConfig()
            .observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                    new PropagatingSenderTracingObservationHandler<>(this.tracer, propagator),
                    new PropagatingReceiverTracingObservationHandler<>(this.tracer, propagator),
                    new DefaultTracingObservationHandler(this.tracer)));
    }

    @AfterEach
    void stopAndCheckTheFake() {
        this.bridging = false;
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void theServersHandlerSpanIsTheChildOfTheClientsRequestSpan() {
        FakeRpmaServer.runner(this.fake)
            .withConfiguration(AutoConfigurations.of(RpmaObservationAutoConfiguration.class,
                    RpmaClientAutoConfiguration.class))
            .withBean(ObservationRegistry.class, () -> this.observations)
            .withBean(TracedHandlers.class, () -> new TracedHandlers(this.tracer))
            .withPropertyValues("rpma.server.observation-enabled=true",
                    "rpma.client.servers.orders.address=" + ADDRESS, "rpma.client.servers.orders.port=" + PORT)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                Await.until("the client's connection", () -> this.fake.connections().size() == 1);
                FakeConnection client = this.fake.connections().get(0);
                FakeRequest accepted = this.fake.endpointAt(ADDRESS, PORT).queueRequest(new byte[0]);
                assertThat(accepted.awaitConsumed(Await.TIMEOUT)).isEqualTo(FakeRequest.State.CONNECTED);
                bridge(client, accepted.connection());

                RpmaClient orders = context.getBean(RpmaClient.class);
                Observation checkout = Observation.start("checkout", this.observations);
                byte[] reply;
                try (Observation.Scope scope = checkout.openScope()) {
                    reply = orders.request("echo", "ping".getBytes(StandardCharsets.US_ASCII)).get(30, TimeUnit.SECONDS);
                }
                checkout.stop();
                assertThat(reply).asString(StandardCharsets.US_ASCII).isEqualTo("ping");

                SimpleSpan checkoutSpan = span("checkout");
                SimpleSpan clientSpan = span("rpma echo");
                SimpleSpan serverSpan = span("rpma TracedHandlers.echo");
                assertThat(clientSpan.getKind()).isEqualTo(Span.Kind.CLIENT);
                assertThat(clientSpan.getParentId()).isEqualTo(checkoutSpan.getSpanId());
                assertThat(serverSpan.getKind()).isEqualTo(Span.Kind.SERVER);
                assertThat(serverSpan.getTraceId()).as("one trace").isEqualTo(clientSpan.getTraceId())
                    .isEqualTo(checkoutSpan.getTraceId());
                assertThat(serverSpan.getParentId()).as("the client's span is the parent")
                    .isEqualTo(clientSpan.getSpanId());
                assertThat(context.getBean(TracedHandlers.class).seen)
                    .as("the server's span is current while the handler runs")
                    .containsExactly(serverSpan.getTraceId() + "/" + serverSpan.getSpanId());

                // both sides' observations: names and key values, nothing of the payload
                TestObservationRegistryAssert.assertThat(this.observations)
                    .hasObservationWithNameEqualTo("rpma.client.requests").that()
                    .hasLowCardinalityKeyValue("client", "orders")
                    .hasLowCardinalityKeyValue("server", ADDRESS + ":" + PORT)
                    .hasLowCardinalityKeyValue("route", "echo")
                    .hasLowCardinalityKeyValue("outcome", "success");
                TestObservationRegistryAssert.assertThat(this.observations)
                    .hasObservationWithNameEqualTo("rpma.message.handler.invocation").that()
                    .hasLowCardinalityKeyValue("endpoint", "default")
                    .hasLowCardinalityKeyValue("handler", "TracedHandlers.echo")
                    .hasKeyValuesCount(2);
            });
    }

    /** The span named {@code name}, once it ended. */
    private SimpleSpan span(String name) {
        Await.until("span " + name, () -> this.tracer.getSpans().stream()
            .anyMatch((span) -> name.equals(span.getName()) && span.getEndTimestamp().toEpochMilli() != 0));
        return this.tracer.getSpans().stream().filter((span) -> name.equals(span.getName())).findFirst().orElseThrow();
    }

    /** Joins the two sides: what one sends, the other receives, in order. */
    private void bridge(FakeConnection client, FakeConnection server) {
        Thread thread = new Thread(() -> {
            int toServer = 0;
            int toClient = 0;
            while (this.bridging) {
                List<byte[]> fromClient = client.sent();
                for (; toServer < fromClient.size(); toServer++) {
                    server.deliver(fromClient.get(toServer));
                }
                List<byte[]> fromServer = server.sent();
                for (; toClient < fromServer.size(); toClient++) {
                    client.deliver(fromServer.get(toClient));
                }
                try {
                    Thread.sleep(1);
                }
                catch (InterruptedException ex) {
                    return;
                }
            }
        }, "bridge");
        thread.setDaemon(true);
        thread.start();
    }

    /** Accepts every connection; echoes, noting the span current on its thread. */
    static class TracedHandlers {

        final List<String> seen = new CopyOnWriteArrayList<>();

        private final Tracer tracer;

        TracedHandlers(Tracer tracer) {
            this.tracer = tracer;
        }

        @RpmaConnectionHandler
        void accept(RpmaIncomingRequest request) {
            request.connect();
        }

        @RpmaMessageHandler(route = "echo")
        byte[] echo(byte[] message) {
            Span current = this.tracer.currentSpan();
            this.seen.add((current != null) ? current.context().traceId() + "/" + current.context().spanId() : "none");
            return message;
        }
    }

    /**
     * W3C Trace Context for the {@link SimpleTracer} (micrometer-tracing's bridges have their own): its
     * 64-bit trace ids are padded to 128 bits on the way out and unpadded on the way in, as W3C
     * propagators do.
     */
    static final class W3cPropagator implements Propagator {

        private final SimpleTracer tracer;

        W3cPropagator(SimpleTracer tracer) {
            this.tracer = tracer;
        }

        @Override
        public List<String> fields() {
            return List.of("traceparent");
        }

        @Override
        public <C> void inject(TraceContext context, C carrier, Setter<C> setter) {
            String traceId = "0".repeat(32 - context.traceId().length()) + context.traceId();
            String spanId = "0".repeat(16 - context.spanId().length()) + context.spanId();
            setter.set(carrier, "traceparent", "00-" + traceId + "-" + spanId + "-01");
        }

        @Override
        public <C> Span.Builder extract(C carrier, Getter<C> getter) {
            String traceParent = getter.get(carrier, "traceparent");
            if (traceParent == null) {
                return this.tracer.spanBuilder();
            }
            String traceId = traceParent.substring(3, 35);
            if (traceId.startsWith("0000000000000000")) {
                traceId = traceId.substring(16);
            }
            TraceContext parent = this.tracer.traceContextBuilder().traceId(traceId)
                .spanId(traceParent.substring(36, 52)).sampled(true).build();
            return this.tracer.spanBuilder().setParent(parent);
        }
    }
}
