package dev.rpma.spring.annotation;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AliasFor;

import dev.rpma.spring.annotation.RpmaHandlerConfigurationException.Problem;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaSession;
import dev.rpma.server.RpmaSessionEnd;
import dev.rpma.server.RpmaStringCodec;
import dev.rpma.server.RpmaWireMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * {@link RpmaConnectionHandler}, {@link RpmaMessageHandler} and {@link RpmaSessionEvent} discovery by
 * {@link RpmaHandlerBeanPostProcessor} into the {@link RpmaHandlerRegistry}, the way spring-kafka
 * discovers listeners: through proxies and meta-annotations, with placeholders in endpoint names; and
 * the registry's checks against the configured endpoints.
 */
class RpmaHandlerDiscoveryTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withUserConfiguration(DiscoveryConfiguration.class);

    @Test
    void unnamedHandlerServesTheDefaultEndpoint() {
        this.runner.withBean("greeter", Greeter.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.connectionHandlers()).singleElement().satisfies((handler) -> {
                assertThat(handler.endpoint()).isEqualTo("default");
                assertThat(handler.beanName()).isEqualTo("greeter");
                assertThat(handler.name()).isEqualTo("Greeter.hello");
            });
            registry.resolve(endpoints("default"), List.of());
            registry.connectionHandler("default").handle(null);
            assertThat(context.getBean(Greeter.class).calls).hasValue(1);
        });
    }

    @Test
    void classLevelEndpointIsTheDefaultOfItsMethods() {
        this.runner.withBean(ReplicaHandlers.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.connectionHandlers()).extracting(RpmaConnectionHandlerMethod::name, RpmaConnectionHandlerMethod::endpoint)
                .containsExactlyInAnyOrder(tuple("ReplicaHandlers.replica", "replica"), tuple("ReplicaHandlers.admin", "admin"));
            registry.resolve(endpoints("replica", "admin"), List.of());
        });
    }

    @Test
    void metaAnnotationWithAPlaceholderEndpoint() {
        this.runner.withPropertyValues("my.endpoint=replica").withBean(MetaAnnotated.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.connectionHandlers()).singleElement()
                .satisfies((handler) -> assertThat(handler.endpoint()).isEqualTo("replica"));
        });
    }

    @Test
    void metaAnnotationAliasingTheEndpoint() {
        this.runner.withPropertyValues("my.endpoint=admin").withBean(AliasAnnotated.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.connectionHandlers()).singleElement()
                .satisfies((handler) -> assertThat(handler.endpoint()).isEqualTo("admin"));
        });
    }

    @Test
    void annotationOnAnInterfaceMethodIsFound() {
        this.runner.withBean(AnnotatedOnInterface.class).run((context) -> assertThat(
                context.getBean(RpmaHandlerRegistry.class).connectionHandlers())
            .singleElement()
            .satisfies((handler) -> assertThat(handler.endpoint()).isEqualTo("replica")));
    }

    @Test
    void handlerBehindAJdkProxyIsFoundAndInvokedThroughTheProxy() {
        this.runner.withBean(ProxyingPostProcessor.class, () -> proxyingHandlers(false))
            .withBean("viaInterface", InterfaceHandler.class)
            .run((context) -> {
                Object bean = context.getBean("viaInterface");
                assertThat(AopUtils.isJdkDynamicProxy(bean)).isTrue();
                RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
                assertThat(registry.connectionHandlers()).singleElement().satisfies((handler) -> {
                    assertThat(handler.endpoint()).isEqualTo("replica");
                    assertThat(handler.method().getDeclaringClass()).isEqualTo(ConnectionHandling.class);
                });
                registry.resolve(endpoints("replica"), List.of());
                registry.connectionHandler("replica").handle(null);
                ProxyingPostProcessor proxying = context.getBean(ProxyingPostProcessor.class);
                assertThat(proxying.advised).containsExactly("accept");
                assertThat(InterfaceHandler.calls).hasValue(1);
            });
    }

    @Test
    void handlerBehindACglibProxyIsFoundAndInvokedThroughTheProxy() {
        this.runner.withBean(ProxyingPostProcessor.class, () -> proxyingHandlers(true))
            .withBean("greeter", Greeter.class)
            .run((context) -> {
                Object bean = context.getBean("greeter");
                assertThat(AopUtils.isCglibProxy(bean)).isTrue();
                RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
                assertThat(registry.connectionHandlers()).singleElement()
                    .satisfies((handler) -> assertThat(handler.name()).isEqualTo("Greeter.hello"));
                registry.resolve(endpoints("default"), List.of());
                registry.connectionHandler("default").handle(null);
                assertThat(context.getBean(ProxyingPostProcessor.class).advised).containsExactly("hello");
                assertThat(((Greeter) AopProxyUtils.getSingletonTarget(bean)).calls).hasValue(1);
            });
    }

    @Test
    void aMessageHandlerBehindAJdkProxyWithAMetaAnnotationIsFoundAndInvokedThroughTheProxy() {
        this.runner.withBean(ProxyingPostProcessor.class, () -> proxyingHandlers(false))
            .withBean("echo", EchoHandler.class)
            .run((context) -> {
                assertThat(AopUtils.isJdkDynamicProxy(context.getBean("echo"))).isTrue();
                RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
                registry.resolve(endpoints("orders"), List.of(new RpmaStringCodec()));
                assertThat(registry.messageListeners("orders")).containsOnlyKeys("echo");
                Object reply = registry.messageListeners("orders").get("echo")
                    .onMessage(ByteBuffer.wrap("hi".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                            new RpmaMessageHandlerMethodTests.TestSession());
                assertThat(java.nio.charset.StandardCharsets.UTF_8.decode((ByteBuffer) reply).toString())
                    .isEqualTo("hi");
                assertThat(context.getBean(ProxyingPostProcessor.class).advised).containsExactly("echo");
            });
    }

    @Test
    void checkedExceptionOfAHandlerReachesTheCallerUnwrapped() {
        this.runner.withBean(Failing.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            registry.resolve(endpoints("default"), List.of());
            assertThatExceptionOfType(IOException.class).isThrownBy(() -> registry.connectionHandler("default").handle(null))
                .withMessage("disk on fire");
        });
    }

    @Test
    void parameterOtherThanRequestAndEndpointNameFailsTheContext() {
        this.runner.withBean(WrongParameter.class).run((context) -> assertThat(context).getFailure()
            .rootCause()
            .isInstanceOfSatisfying(RpmaHandlerConfigurationException.class, (ex) -> {
                assertThat(ex.problem()).isEqualTo(Problem.INVALID_SIGNATURE);
                assertThat(ex).hasMessageContaining("WrongParameter.handle").hasMessageContaining("int");
            }));
    }

    @Test
    void methodWithoutARequestFailsTheContext() {
        this.runner.withBean(NoRequest.class).run((context) -> assertThat(context).getFailure()
            .rootCause()
            .isInstanceOfSatisfying(RpmaHandlerConfigurationException.class, (ex) -> {
                assertThat(ex.problem()).isEqualTo(Problem.INVALID_SIGNATURE);
                assertThat(ex).hasMessageContaining("must take an RpmaIncomingRequest");
            }));
    }

    @Test
    void classAnnotatedWithoutAnnotatedMethodsFailsTheContext() {
        this.runner.withBean("onlyClassAnnotated", OnlyClassAnnotated.class).run((context) -> assertThat(context)
            .getFailure()
            .rootCause()
            .isInstanceOfSatisfying(RpmaHandlerConfigurationException.class, (ex) -> {
                assertThat(ex.problem()).isEqualTo(Problem.NO_HANDLER_METHOD);
                assertThat(ex.endpoint()).isEqualTo("replica");
                assertThat(ex).hasMessageContaining("Bean 'onlyClassAnnotated'")
                    .hasMessageContaining("none of its methods is");
            }));
    }

    @Test
    void endpointWithoutAHandler() {
        this.runner.withBean(Greeter.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> registry.resolve(endpoints("default", "replica"), List.of()))
                .withMessageContaining("'replica' has no @RpmaConnectionHandler method")
                .satisfies((ex) -> {
                    assertThat(ex.endpoint()).isEqualTo("replica");
                    assertThat(ex.problem()).isEqualTo(Problem.NO_HANDLER);
                });
        });
    }

    @Test
    void twoHandlersForOneEndpointConflict() {
        this.runner.withBean("greeter", Greeter.class).withBean("secondGreeter", SecondGreeter.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> registry.resolve(endpoints("default"), List.of()))
                .withMessageContaining("'default' has 2 @RpmaConnectionHandler methods")
                .withMessageContaining("Greeter.hello (bean 'greeter', endpoint 'default')")
                .withMessageContaining("SecondGreeter.hi (bean 'secondGreeter', endpoint 'default')")
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.CONFLICTING_HANDLERS));
        });
    }

    @Test
    void misspeltEndpointIsReportedAsUnknownRatherThanAsAMissingHandler() {
        this.runner.withPropertyValues("my.endpoint=replcia").withBean(Greeter.class).withBean(MetaAnnotated.class)
            .run((context) -> assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> context.getBean(RpmaHandlerRegistry.class).resolve(endpoints("default", "replica"), List.of()))
                .withMessageContaining("MetaAnnotated.onReplica")
                .withMessageContaining("names endpoint 'replcia', which is not configured; configured: [default, replica]")
                .satisfies((ex) -> {
                    assertThat(ex.endpoint()).isEqualTo("replcia");
                    assertThat(ex.problem()).isEqualTo(Problem.UNKNOWN_ENDPOINT);
                }));
    }

    @Test
    void messageHandlersAndSessionEventMethodsAreFoundByEndpointAndRoute() {
        this.runner.withBean(Greeter.class).withBean(FramedHandlers.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            registry.resolve(endpoints("default", "orders"), List.of(new RpmaStringCodec()));
            assertThat(registry.messageListeners("orders")).containsOnlyKeys("create", "cancel");
            assertThat(registry.messageListeners("orders").get("create").name()).isEqualTo("FramedHandlers.create");
            assertThat(registry.messageListeners("default")).isEmpty();
            // message handlers and no connection handler: every request is accepted
            assertThat(registry.connectionHandler("orders").name()).isEqualTo("accept-all");
            assertThat(registry.sessionListeners("orders")).hasSize(2);
            assertThat(registry.sessionListeners("default")).isEmpty();
        });
    }

    @Test
    void aRawEndpointTakesOneMessageHandlerWithoutARoute() {
        this.runner.withBean(Greeter.class).withBean(FramedHandlers.class).run((context) -> {
            Map<String, RpmaWireMode> endpoints = endpoints("default");
            endpoints.put("orders", RpmaWireMode.RAW);
            assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> context.getBean(RpmaHandlerRegistry.class).resolve(endpoints, List.of()))
                .withMessageContaining("'orders' is raw, so its messages carry no route")
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.ROUTE_ON_RAW_ENDPOINT));
        });
    }

    @Test
    void twoMessageHandlersOfOneRouteConflict() {
        this.runner.withBean(Greeter.class).withBean(FramedHandlers.class).withBean(SecondCreate.class)
            .run((context) -> assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> context.getBean(RpmaHandlerRegistry.class).resolve(endpoints("default", "orders"),
                        List.of(new RpmaStringCodec())))
                .withMessageContaining("two message handlers for route 'create'")
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.CONFLICTING_ROUTES)));
    }

    @Test
    void aMessageHandlerOfAnEndpointNobodyConfiguredIsReported() {
        this.runner.withBean(Greeter.class).withBean(FramedHandlers.class)
            .run((context) -> assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> context.getBean(RpmaHandlerRegistry.class).resolve(endpoints("default"), List.of()))
                .withMessageContaining("@RpmaMessageHandler FramedHandlers.")
                .withMessageContaining("names endpoint 'orders', which is not configured")
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.UNKNOWN_ENDPOINT)));
    }

    @Test
    void aMessageHandlerTakingATypeNoCodecDecodesIsReportedWithTheCodecs() {
        this.runner.withBean(Greeter.class).withBean(NeedsACodec.class)
            .run((context) -> assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> context.getBean(RpmaHandlerRegistry.class).resolve(endpoints("default"),
                        List.of(new RpmaStringCodec())))
                .withMessageContaining("NeedsACodec.handle takes a java.time.Instant, but no RpmaMessageCodec decodes it")
                .withMessageContaining("[RpmaStringCodec]")
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.NO_CODEC)));
    }

    @Test
    void aConnectionHandlerThatReturnsAValueFailsTheContext() {
        this.runner.withBean(ReturnsABoolean.class).run((context) -> assertThat(context).getFailure().rootCause()
            .isInstanceOfSatisfying(RpmaHandlerConfigurationException.class, (ex) -> {
                assertThat(ex.problem()).isEqualTo(Problem.INVALID_SIGNATURE);
                assertThat(ex).hasMessageContaining("ReturnsABoolean.handle returns boolean, which would be ignored");
            }));
    }

    @Test
    void aSessionEventMethodWithAParameterItCannotGetFailsTheContext() {
        this.runner.withBean(WrongSessionEvent.class).run((context) -> assertThat(context).getFailure().rootCause()
            .isInstanceOfSatisfying(RpmaHandlerConfigurationException.class, (ex) -> {
                assertThat(ex.problem()).isEqualTo(Problem.INVALID_SIGNATURE);
                assertThat(ex).hasMessageContaining("WrongSessionEvent.onEvent has a parameter of type int");
            }));
    }

    @Test
    void aClassAnnotatedAsMessageHandlerWithoutAnnotatedMethodsFailsTheContext() {
        this.runner.withBean(OnlyClassMessageHandler.class).run((context) -> assertThat(context).getFailure()
            .rootCause().isInstanceOfSatisfying(RpmaHandlerConfigurationException.class,
                    (ex) -> assertThat(ex.problem()).isEqualTo(Problem.NO_HANDLER_METHOD)));
    }

    /** Framed endpoints of these names. */
    static Map<String, RpmaWireMode> endpoints(String... names) {
        Map<String, RpmaWireMode> endpoints = new LinkedHashMap<>();
        for (String name : names) {
            endpoints.put(name, RpmaWireMode.FRAMED);
        }
        return endpoints;
    }

    @Configuration(proxyBeanMethods = false)
    static class DiscoveryConfiguration {

        @Bean
        static RpmaHandlerRegistry rpmaHandlerRegistry() {
            return new RpmaHandlerRegistry();
        }

        @Bean
        static RpmaHandlerBeanPostProcessor rpmaHandlerBeanPostProcessor(
                RpmaHandlerRegistry rpmaHandlerRegistry) {
            return new RpmaHandlerBeanPostProcessor(rpmaHandlerRegistry);
        }
    }

    private static ProxyingPostProcessor proxyingHandlers(boolean proxyTargetClass) {
        return new ProxyingPostProcessor(proxyTargetClass, Greeter.class, InterfaceHandler.class, EchoHandler.class);
    }

    static class Greeter {

        final AtomicInteger calls = new AtomicInteger();

        @RpmaConnectionHandler
        public void hello(RpmaIncomingRequest request) {
            this.calls.incrementAndGet();
        }
    }

    static class SecondGreeter {

        @RpmaConnectionHandler("default")
        void hi(RpmaIncomingRequest request) {
        }
    }

    @RpmaConnectionHandler(endpoint = "replica")
    static class ReplicaHandlers {

        @RpmaConnectionHandler
        void replica(RpmaIncomingRequest request, String endpointName) {
        }

        @RpmaConnectionHandler("admin")
        void admin(RpmaIncomingRequest request) {
        }

        void notAHandler(RpmaIncomingRequest request) {
        }
    }

    @RpmaConnectionHandler("replica")
    static class OnlyClassAnnotated {

        public void handle(RpmaIncomingRequest request) {
        }
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @RpmaConnectionHandler(endpoint = "${my.endpoint}")
    @interface ConfiguredEndpointHandler {

    }

    static class MetaAnnotated {

        @ConfiguredEndpointHandler
        void onReplica(RpmaIncomingRequest request) {
        }
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @RpmaConnectionHandler
    @interface OnEndpoint {

        @AliasFor(annotation = RpmaConnectionHandler.class, attribute = "endpoint")
        String value();
    }

    static class AliasAnnotated {

        @OnEndpoint("${my.endpoint}")
        void onAdmin(RpmaIncomingRequest request) {
        }
    }

    interface ConnectionHandling {

        @RpmaConnectionHandler("replica")
        void accept(RpmaIncomingRequest request);
    }

    static class AnnotatedOnInterface implements ConnectionHandling {

        @Override
        public void accept(RpmaIncomingRequest request) {
        }
    }

    static class InterfaceHandler implements ConnectionHandling {

        static final AtomicInteger calls = new AtomicInteger();

        InterfaceHandler() {
            calls.set(0);
        }

        @Override
        public void accept(RpmaIncomingRequest request) {
            calls.incrementAndGet();
        }
    }

    static class Failing {

        @RpmaConnectionHandler
        void fail(RpmaIncomingRequest request) throws IOException {
            throw new IOException("disk on fire");
        }
    }

    static class WrongParameter {

        @RpmaConnectionHandler
        void handle(RpmaIncomingRequest request, int attempt) {
        }
    }

    static class NoRequest {

        @RpmaConnectionHandler
        void handle(String endpoint) {
        }
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @RpmaMessageHandler(endpoint = "orders", route = "echo")
    @interface EchoRoute {

    }

    interface MessageHandling {

        @EchoRoute
        String echo(String message);
    }

    static class EchoHandler implements MessageHandling {

        @Override
        public String echo(String message) {
            return message;
        }
    }

    @RpmaMessageHandler(endpoint = "orders")
    static class FramedHandlers {

        @RpmaMessageHandler(route = "create")
        String create(String order) {
            return "created " + order;
        }

        @RpmaMessageHandler(route = "cancel")
        void cancel(ByteBuffer order, RpmaSession session) {
        }

        @RpmaSessionEvent("orders")
        void opened(RpmaSession session) {
        }

        @RpmaSessionEvent("orders")
        void closed(RpmaSession session, RpmaSessionEnd end, String endpoint) {
        }
    }

    static class SecondCreate {

        @RpmaMessageHandler(endpoint = "orders", route = "create")
        byte[] create(byte[] order) {
            return order;
        }
    }

    static class NeedsACodec {

        @RpmaMessageHandler
        void handle(java.time.Instant when) {
        }
    }

    static class ReturnsABoolean {

        @RpmaConnectionHandler
        boolean handle(RpmaIncomingRequest request) {
            return true;
        }
    }

    static class WrongSessionEvent {

        @RpmaSessionEvent
        void onEvent(RpmaSession session, int attempt) {
        }
    }

    @RpmaMessageHandler("orders")
    static class OnlyClassMessageHandler {

        void handle(ByteBuffer message) {
        }
    }
}
