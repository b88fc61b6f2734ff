package dev.rpma.spring.annotation;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AliasFor;

import dev.rpma.spring.annotation.RpmaHandlerConfigurationException.Problem;
import dev.rpma.spring.server.RpmaIncomingRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * {@link RpmaConnectionHandler} discovery by {@link RpmaConnectionHandlerBeanPostProcessor} into the
 * {@link RpmaHandlerRegistry}, the way spring-kafka discovers listeners: through proxies and
 * meta-annotations, with placeholders in endpoint names.
 */
class RpmaConnectionHandlerDiscoveryTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withUserConfiguration(DiscoveryConfiguration.class);

    @Test
    void unnamedHandlerServesTheDefaultEndpoint() {
        this.runner.withBean("greeter", Greeter.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.handlers()).singleElement().satisfies((handler) -> {
                assertThat(handler.endpoint()).isEqualTo("default");
                assertThat(handler.beanName()).isEqualTo("greeter");
                assertThat(handler.name()).isEqualTo("Greeter.hello");
            });
            registry.validate(List.of("default"));
            registry.handlerFor("default").handle(null);
            assertThat(context.getBean(Greeter.class).calls).hasValue(1);
        });
    }

    @Test
    void classLevelEndpointIsTheDefaultOfItsMethods() {
        this.runner.withBean(ReplicaHandlers.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.handlers()).extracting(RpmaHandlerMethod::name, RpmaHandlerMethod::endpoint)
                .containsExactlyInAnyOrder(tuple("ReplicaHandlers.replica", "replica"), tuple("ReplicaHandlers.admin", "admin"));
            registry.validate(List.of("replica", "admin"));
        });
    }

    @Test
    void metaAnnotationWithAPlaceholderEndpoint() {
        this.runner.withPropertyValues("my.endpoint=replica").withBean(MetaAnnotated.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.handlers()).singleElement()
                .satisfies((handler) -> assertThat(handler.endpoint()).isEqualTo("replica"));
        });
    }

    @Test
    void metaAnnotationAliasingTheEndpoint() {
        this.runner.withPropertyValues("my.endpoint=admin").withBean(AliasAnnotated.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThat(registry.handlers()).singleElement()
                .satisfies((handler) -> assertThat(handler.endpoint()).isEqualTo("admin"));
        });
    }

    @Test
    void annotationOnAnInterfaceMethodIsFound() {
        this.runner.withBean(AnnotatedOnInterface.class).run((context) -> assertThat(
                context.getBean(RpmaHandlerRegistry.class).handlers())
            .singleElement()
            .satisfies((handler) -> assertThat(handler.endpoint()).isEqualTo("replica")));
    }

    @Test
    void handlerBehindAJdkProxyIsFoundAndInvokedThroughTheProxy() {
        this.runner.withBean(ProxyingPostProcessor.class, () -> new ProxyingPostProcessor(false))
            .withBean("viaInterface", InterfaceHandler.class)
            .run((context) -> {
                Object bean = context.getBean("viaInterface");
                assertThat(AopUtils.isJdkDynamicProxy(bean)).isTrue();
                RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
                assertThat(registry.handlers()).singleElement().satisfies((handler) -> {
                    assertThat(handler.endpoint()).isEqualTo("replica");
                    assertThat(handler.method().getDeclaringClass()).isEqualTo(ConnectionHandling.class);
                });
                registry.handlerFor("replica").handle(null);
                ProxyingPostProcessor proxying = context.getBean(ProxyingPostProcessor.class);
                assertThat(proxying.advised).containsExactly("accept");
                assertThat(InterfaceHandler.calls).hasValue(1);
            });
    }

    @Test
    void handlerBehindACglibProxyIsFoundAndInvokedThroughTheProxy() {
        this.runner.withBean(ProxyingPostProcessor.class, () -> new ProxyingPostProcessor(true))
            .withBean("greeter", Greeter.class)
            .run((context) -> {
                Object bean = context.getBean("greeter");
                assertThat(AopUtils.isCglibProxy(bean)).isTrue();
                RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
                assertThat(registry.handlers()).singleElement()
                    .satisfies((handler) -> assertThat(handler.name()).isEqualTo("Greeter.hello"));
                registry.handlerFor("default").handle(null);
                assertThat(context.getBean(ProxyingPostProcessor.class).advised).containsExactly("hello");
                assertThat(((Greeter) AopProxyUtils.getSingletonTarget(bean)).calls).hasValue(1);
            });
    }

    @Test
    void checkedExceptionOfAHandlerReachesTheCallerUnwrapped() {
        this.runner.withBean(Failing.class).run((context) -> assertThatExceptionOfType(IOException.class)
            .isThrownBy(() -> context.getBean(RpmaHandlerRegistry.class).handlerFor("default").handle(null))
            .withMessage("disk on fire"));
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
                .isThrownBy(() -> registry.validate(List.of("default", "replica")))
                .withMessageContaining("'replica' has no @RpmaConnectionHandler method")
                .satisfies((ex) -> {
                    assertThat(ex.endpoint()).isEqualTo("replica");
                    assertThat(ex.problem()).isEqualTo(Problem.NO_HANDLER);
                });
            // a request on it fails the same way, so the acceptor rejects it
            assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> registry.handlerFor("replica").handle(null))
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.NO_HANDLER));
            assertThat(registry.handlerFor("replica").name()).isEqualTo("<no handler for 'replica'>");
        });
    }

    @Test
    void twoHandlersForOneEndpointConflict() {
        this.runner.withBean("greeter", Greeter.class).withBean("secondGreeter", SecondGreeter.class).run((context) -> {
            RpmaHandlerRegistry registry = context.getBean(RpmaHandlerRegistry.class);
            assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> registry.validate(List.of("default")))
                .withMessageContaining("'default' has 2 @RpmaConnectionHandler methods")
                .withMessageContaining("Greeter.hello (bean 'greeter', endpoint 'default')")
                .withMessageContaining("SecondGreeter.hi (bean 'secondGreeter', endpoint 'default')")
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.CONFLICTING_HANDLERS));
            assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> registry.handlerFor("default").handle(null))
                .satisfies((ex) -> assertThat(ex.problem()).isEqualTo(Problem.CONFLICTING_HANDLERS));
        });
    }

    @Test
    void misspeltEndpointIsReportedAsUnknownRatherThanAsAMissingHandler() {
        this.runner.withPropertyValues("my.endpoint=replcia").withBean(Greeter.class).withBean(MetaAnnotated.class)
            .run((context) -> assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
                .isThrownBy(() -> context.getBean(RpmaHandlerRegistry.class).validate(List.of("default", "replica")))
                .withMessageContaining("MetaAnnotated.onReplica")
                .withMessageContaining("names endpoint 'replcia', which is not configured; configured: [default, replica]")
                .satisfies((ex) -> {
                    assertThat(ex.endpoint()).isEqualTo("replcia");
                    assertThat(ex.problem()).isEqualTo(Problem.UNKNOWN_ENDPOINT);
                }));
    }

    @Configuration(proxyBeanMethods = false)
    static class DiscoveryConfiguration {

        @Bean
        static RpmaHandlerRegistry rpmaHandlerRegistry() {
            return new RpmaHandlerRegistry();
        }

        @Bean
        static RpmaConnectionHandlerBeanPostProcessor rpmaConnectionHandlerBeanPostProcessor(
                RpmaHandlerRegistry rpmaHandlerRegistry) {
            return new RpmaConnectionHandlerBeanPostProcessor(rpmaHandlerRegistry);
        }
    }

    /** Wraps every handler bean in a proxy before discovery sees it, as an aspect would. */
    static class ProxyingPostProcessor implements BeanPostProcessor, Ordered {

        final List<String> advised = new CopyOnWriteArrayList<>();

        private final boolean proxyTargetClass;

        ProxyingPostProcessor(boolean proxyTargetClass) {
            this.proxyTargetClass = proxyTargetClass;
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
            if (!(bean instanceof Greeter) && !(bean instanceof InterfaceHandler)) {
                return bean;
            }
            ProxyFactory factory = new ProxyFactory(bean);
            factory.setProxyTargetClass(this.proxyTargetClass);
            factory.addAdvice((MethodInterceptor) (invocation) -> {
                this.advised.add(invocation.getMethod().getName());
                return invocation.proceed();
            });
            return factory.getProxy();
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
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
}
