package dev.rpma.spring.annotation;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.testing.FakeLibRpma;
import dev.rpma.jna.testing.FakeRequest;
import dev.rpma.spring.annotation.RpmaHandlerConfigurationException.Problem;
import dev.rpma.spring.server.RpmaEndpointSettings;
import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaRequestHandler;
import dev.rpma.spring.server.RpmaServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The handler {@link RpmaHandlerRegistry#handlerFor} gives the acceptor: it keeps the method it found
 * (and its name) across requests, but looks again after a registration, so a handler registered late
 * is found and a second one for the same endpoint is still a conflict; and {@link RpmaHandlerMethod}
 * passes the request and the endpoint name whatever the order of its parameters.
 */
class RpmaHandlerRegistryTests {

    @Test
    void aSecondHandlerRegisteredAfterRequestsWereServedMakesTheEndpointConflicting() throws Exception {
        RpmaHandlerRegistry registry = new RpmaHandlerRegistry();
        Counting first = new Counting();
        registry.register(method(first, "first", "handle"));
        RpmaRequestHandler handler = registry.handlerFor("default");
        handler.handle(null);
        handler.handle(null);
        assertThat(first.calls).hasValue(2);

        registry.register(method(new Counting(), "second", "handle"));
        assertThatExceptionOfType(RpmaHandlerConfigurationException.class).isThrownBy(() -> handler.handle(null))
            .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.CONFLICTING_HANDLERS));
        assertThat(first.calls).hasValue(2);
    }

    @Test
    void aHandlerRegisteredAfterAFailedLookupIsFound() throws Exception {
        RpmaHandlerRegistry registry = new RpmaHandlerRegistry();
        RpmaRequestHandler handler = registry.handlerFor("default");
        assertThatExceptionOfType(RpmaHandlerConfigurationException.class).isThrownBy(() -> handler.handle(null))
            .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.NO_HANDLER));
        assertThat(handler.name()).isEqualTo("<no handler for 'default'>");

        Counting late = new Counting();
        registry.register(method(late, "late", "handle"));
        handler.handle(null);
        assertThat(late.calls).hasValue(1);
        assertThat(handler.name()).isEqualTo("Counting.handle");
    }

    @Test
    void theNameIsBuiltOnceNotPerRequest() throws Exception {
        RpmaHandlerRegistry registry = new RpmaHandlerRegistry();
        RpmaHandlerMethod method = method(new Counting(), "counting", "handle");
        registry.register(method);
        RpmaRequestHandler handler = registry.handlerFor("default");
        handler.handle(null);
        assertThat(handler.name()).isEqualTo("Counting.handle").isSameAs(handler.name()).isSameAs(method.name());
    }

    @Test
    void aStaticHandlerMethodIsCalled() throws Exception {
        StaticHandler.calls.set(0);
        method(new StaticHandler(), "static", "handle").handle(null);
        assertThat(StaticHandler.calls).hasValue(1);
    }

    @Test
    void anErrorOfTheHandlerReachesTheCallerUnwrapped() {
        RpmaHandlerMethod method = method(new Failing(), "failing", "handle");
        assertThatExceptionOfType(HandlerError.class).isThrownBy(() -> method.handle(null));
    }

    @Test
    void endpointNameFirstAndRequestSecondGetTheirArgumentsOverTheFake() throws Exception {
        RpmaHandlerRegistry registry = new RpmaHandlerRegistry();
        NameFirst bean = new NameFirst();
        registry.register(method(bean, "nameFirst", "handle"));
        try (FakeLibRpma fake = new FakeLibRpma()) {
            RpmaServer server = RpmaServer.listen(Rpma.using(fake), List.of(new RpmaEndpointSettings("default",
                    "198.18.0.1", 7205, 8, 2, Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofSeconds(5), 10)),
                    components(registry));
            try {
                server.start();
                FakeRequest request = fake.endpointAt("198.18.0.1", 7205)
                    .queueRequest("hello".getBytes(StandardCharsets.US_ASCII));
                assertThat(request.awaitConsumed(Duration.ofSeconds(10))).isEqualTo(FakeRequest.State.DELETED);
            }
            finally {
                server.close();
            }
            fake.assertNoViolations();
        }
        assertThat(bean.seen).containsExactly("default:hello");
    }

    private static RpmaServer.Components components(RpmaHandlerRegistry registry) {
        return new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String endpointName) {
                return registry.handlerFor(endpointName);
            }

            @Override
            public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings endpoint) {
                return rpma.newConnectionConfig();
            }
        };
    }

    private static RpmaHandlerMethod method(Object bean, String beanName, String name) {
        Method method = java.util.Arrays.stream(bean.getClass().getDeclaredMethods())
            .filter((candidate) -> candidate.getName().equals(name))
            .findFirst()
            .orElseThrow();
        return new RpmaHandlerMethod(bean, beanName, method, "default");
    }

    static class Counting {

        final AtomicInteger calls = new AtomicInteger();

        void handle(RpmaIncomingRequest request) {
            this.calls.incrementAndGet();
        }
    }

    static class StaticHandler {

        static final AtomicInteger calls = new AtomicInteger();

        static void handle(RpmaIncomingRequest request) {
            calls.incrementAndGet();
        }
    }

    static class Failing {

        void handle(RpmaIncomingRequest request) {
            throw new HandlerError();
        }
    }

    static class HandlerError extends Error {

        private static final long serialVersionUID = 1L;
    }

    static class NameFirst {

        final List<String> seen = new CopyOnWriteArrayList<>();

        String handle(String endpointName, RpmaIncomingRequest request) {
            this.seen.add(endpointName + ":" + new String(request.privateData(), StandardCharsets.US_ASCII));
            request.reject();
            return "ignored";
        }
    }
}
