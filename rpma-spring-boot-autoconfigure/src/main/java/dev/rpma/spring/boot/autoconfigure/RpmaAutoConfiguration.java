package dev.rpma.spring.boot.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.RpmaEndpoint;
import dev.rpma.jna.RpmaPeer;
import dev.rpma.spring.annotation.RpmaConnectionHandlerBeanPostProcessor;
import dev.rpma.spring.annotation.RpmaHandlerRegistry;
import dev.rpma.spring.server.RpmaConnectionEventListener;
import dev.rpma.spring.server.RpmaEndpointSettings;
import dev.rpma.spring.server.RpmaRequestHandler;
import dev.rpma.spring.server.RpmaServer;
import dev.rpma.spring.server.RpmaServerObserver;

/**
 * Auto-configures an RDMA server from {@code rpma.server.*}: librpma, the listening endpoints with
 * their acceptors, {@link dev.rpma.spring.annotation.RpmaConnectionHandler} discovery and the
 * lifecycle that starts and gracefully stops accepting. The default endpoint and its peer are beans;
 * so are each named endpoint's, qualified by its name (see {@link RpmaNamedEndpointsRegistrar}).
 */
@AutoConfiguration
@ConditionalOnClass(Rpma.class)
@ConditionalOnBooleanProperty(name = "rpma.server.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RpmaProperties.class)
@Import(RpmaNamedEndpointsRegistrar.class)
public final class RpmaAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    Rpma rpma(RpmaProperties properties) {
        Rpma rpma = Rpma.get();
        if (properties.isLogToSlf4j()) {
            rpma.log().routeToSlf4j();
        }
        return rpma;
    }

    // infrastructure: created with the post-processors, which would otherwise warn about it at every start
    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RpmaHandlerRegistry rpmaHandlerRegistry() {
        return new RpmaHandlerRegistry();
    }

    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RpmaConnectionHandlerBeanPostProcessor rpmaConnectionHandlerBeanPostProcessor(
            RpmaHandlerRegistry rpmaHandlerRegistry) {
        return new RpmaConnectionHandlerBeanPostProcessor(rpmaHandlerRegistry);
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RpmaServer rpmaServer(Rpma rpma, RpmaProperties properties, RpmaHandlerRegistry handlers,
            ObjectProvider<RpmaConnectionConfigCustomizer> customizers, ObjectProvider<RpmaServerObserver> observers,
            ObjectProvider<RpmaConnectionEventListener> listeners) {
        List<RpmaEndpointSettings> settings = RpmaEndpointSettingsFactory.create(properties);
        RpmaConnectionConfigFactory configs = new RpmaConnectionConfigFactory(properties,
                customizers.orderedStream().toList());
        RpmaServerObserver observer = CompositeRpmaServerObserver.of(observers.orderedStream().toList());
        List<RpmaConnectionEventListener> eventListeners = listeners.orderedStream().toList();
        return RpmaServer.listen(rpma, settings, new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String endpointName) {
                return handlers.handlerFor(endpointName);
            }

            @Override
            public RpmaConnectionConfig requestConfig(Rpma library, RpmaEndpointSettings endpoint) {
                return configs.create(library, endpoint);
            }

            @Override
            public RpmaServerObserver observer() {
                return observer;
            }

            @Override
            public List<RpmaConnectionEventListener> listeners() {
                return eventListeners;
            }
        });
    }

    /**
     * The default endpoint ({@code rpma.server.address}/{@code port}), owned by its acceptor once
     * started. The server shuts it down: an inferred {@code close()} would run on the wrong thread.
     */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    RpmaEndpoint rpmaEndpoint(RpmaServer rpmaServer) {
        return rpmaServer.endpoint(RpmaEndpointSettings.DEFAULT_ENDPOINT).endpoint();
    }

    /**
     * The peer of the default endpoint, to register the memory of its connections. The server
     * deletes it after its endpoints and connections, as librpma requires.
     */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    RpmaPeer rpmaPeer(RpmaServer rpmaServer) {
        return rpmaServer.endpoint(RpmaEndpointSettings.DEFAULT_ENDPOINT).endpoint().peer();
    }

    @Bean
    @ConditionalOnMissingBean
    RpmaServerLifecycle rpmaServerLifecycle(RpmaServer rpmaServer, RpmaHandlerRegistry rpmaHandlerRegistry,
            ApplicationEventPublisher publisher) {
        return new RpmaServerLifecycle(rpmaServer, rpmaHandlerRegistry, publisher);
    }
}
