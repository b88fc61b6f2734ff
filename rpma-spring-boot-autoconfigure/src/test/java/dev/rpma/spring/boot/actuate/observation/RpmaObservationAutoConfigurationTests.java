package dev.rpma.spring.boot.actuate.observation;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.Await;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaServer;

import static dev.rpma.spring.boot.actuate.FakeRpmaServer.ADDRESS;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.PORT;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The opt-in Observation around each handler invocation: its name, key values and error, and that it
 * is current on the handler thread, so a tracer's span is too.
 */
class RpmaObservationAutoConfigurationTests {

    private final FakeLibRpma fake = new FakeLibRpma();

    private final SimpleTracer tracer = new SimpleTracer();

    private final TestObservationRegistry observations = TestObservationRegistry.create();

    private final ApplicationContextRunner runner = FakeRpmaServer.runner(this.fake)
        .withConfiguration(AutoConfigurations.of(RpmaObservationAutoConfiguration.class))
        .withBean(ObservationRegistry.class, () -> this.observations)
        .withBean(SimpleTracer.class, () -> this.tracer)
        .withBean(ObservedHandler.class);

    RpmaObservationAutoConfigurationTests() {
        this.observations.observationConfig().observationHandler(new DefaultTracingObservationHandler(this.tracer));
    }

    @AfterEach
    void checkFake() {
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void eachHandlerInvocationIsAnObservationAndASpanWhenEnabled() {
        this.runner.withPropertyValues("rpma.server.observation-enabled=true").run((context) -> {
            assertThat(context).hasSingleBean(RpmaHandlerObservations.class);
            ObservedHandler handler = context.getBean(ObservedHandler.class);
            RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
            submit(this.fake.endpointAt(ADDRESS, PORT), statistics, "accept");
            submit(this.fake.endpointAt(ADDRESS, PORT), statistics, "throw");
            Await.until("two finished spans", () -> finishedSpans() == 2);

            assertThat(this.observations).hasNumberOfObservationsWithNameEqualTo("rpma.handler.invocation", 2)
                .forAllObservationsWithNameEqualTo("rpma.handler.invocation", (observation) -> observation
                    .hasContextualNameEqualTo("rpma default")
                    .hasLowCardinalityKeyValue("endpoint", "default")
                    .hasLowCardinalityKeyValue("handler", "ObservedHandler.handle")
                    // nothing else: no private data, nothing of unbounded cardinality
                    .hasKeyValuesCount(2));

            List<SimpleSpan> spans = List.copyOf(this.tracer.getSpans());
            assertThat(spans).extracting(SimpleSpan::getName).containsOnly("rpma default");
            assertThat(spans).allSatisfy((span) -> assertThat(span.getTags())
                .containsExactlyInAnyOrderEntriesOf(java.util.Map.of("endpoint", "default", "handler", "ObservedHandler.handle")));
            assertThat(spans.get(0).getError()).isNull();
            assertThat(spans.get(1).getError()).isInstanceOf(IllegalStateException.class).hasMessage("scripted failure");

            // in scope on the handler thread: what the handler saw was its own observation and span
            assertThat(handler.seen).hasSize(2).allSatisfy((seen) -> {
                assertThat(seen.endpoint()).isEqualTo("default");
                assertThat(seen.traceId()).isNotNull();
            });
            assertThat(handler.seen).extracting(Seen::traceId)
                .containsExactly(spans.get(0).getTraceId(), spans.get(1).getTraceId());
        });
    }

    @Test
    void offByDefault() {
        this.runner.run((context) -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(RpmaHandlerObservations.class);
            RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
            submit(this.fake.endpointAt(ADDRESS, PORT), statistics, "accept");
            assertThat(context.getBean(ObservedHandler.class).seen).singleElement()
                .satisfies((seen) -> assertThat(seen.endpoint()).isNull());
            assertThat(this.observations).doesNotHaveAnyObservation();
        });
    }

    @Test
    void aConventionBeanReplacesTheDefault() {
        this.runner.withPropertyValues("rpma.server.observation-enabled=true")
            .withBean(RpmaHandlerObservationConvention.class, CustomConvention::new)
            .run((context) -> {
                RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
                submit(this.fake.endpointAt(ADDRESS, PORT), statistics, "accept");
                Await.until("the span", () -> finishedSpans() == 1);
                assertThat(this.observations).hasSingleObservationThat()
                    .hasNameEqualTo("my.rdma.accept")
                    .hasLowCardinalityKeyValue("team", "storage");
            });
    }

    @Test
    void backsOffWithoutAnObservationRegistry() {
        FakeRpmaServer.runner(this.fake)
            .withConfiguration(AutoConfigurations.of(RpmaObservationAutoConfiguration.class))
            .withBean(ObservedHandler.class)
            .withPropertyValues("rpma.server.observation-enabled=true")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaHandlerObservations.class));
    }

    private long finishedSpans() {
        return this.tracer.getSpans().stream()
            .filter((span) -> span.getEndTimestamp() != null && span.getEndTimestamp().toEpochMilli() != 0)
            .count();
    }

    /** What the handler saw while it ran: the current observation's endpoint and span. */
    record Seen(String endpoint, String traceId) {
    }

    /** Accepts, or throws for {@code throw}; records what was current on its thread. */
    static class ObservedHandler {

        final List<Seen> seen = new CopyOnWriteArrayList<>();

        private final ObservationRegistry registry;

        private final SimpleTracer tracer;

        ObservedHandler(ObjectProvider<ObservationRegistry> registry, ObjectProvider<SimpleTracer> tracer) {
            this.registry = registry.getIfAvailable(() -> ObservationRegistry.NOOP);
            this.tracer = tracer.getIfAvailable();
        }

        @RpmaConnectionHandler
        void handle(RpmaIncomingRequest request) {
            Observation current = this.registry.getCurrentObservation();
            String endpoint = (current != null && current.getContext() instanceof RpmaHandlerObservationContext context)
                    ? context.getEndpoint() : null;
            String traceId = (this.tracer != null && this.tracer.currentSpan() != null)
                    ? this.tracer.currentSpan().context().traceId() : null;
            this.seen.add(new Seen(endpoint, traceId));
            if ("throw".equals(new String(request.privateData(), StandardCharsets.US_ASCII))) {
                throw new IllegalStateException("scripted failure");
            }
            request.connect();
        }
    }

    /** Another name and a key of the user's. */
    static class CustomConvention extends DefaultRpmaHandlerObservationConvention {

        @Override
        public String getName() {
            return "my.rdma.accept";
        }

        @Override
        public KeyValues getLowCardinalityKeyValues(RpmaHandlerObservationContext context) {
            return super.getLowCardinalityKeyValues(context).and("team", "storage");
        }
    }
}
