package dev.rpma.spring.boot.autoconfigure;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
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
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.server.RpmaAdmission;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRegionDefinition;
import dev.rpma.server.RpmaRegions;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerObserver;
import dev.rpma.server.RpmaSessionListener;
import dev.rpma.server.RpmaStringCodec;
import dev.rpma.spring.annotation.RpmaHandlerBeanPostProcessor;
import dev.rpma.spring.annotation.RpmaHandlerRegistry;

/**
 * Auto-configures an RDMA server from {@code rpma.server.*}: librpma, the endpoints with their
 * acceptors and their admission steps (the admission token from {@code rpma.server.admission}, then the
 * application's {@link RpmaAdmission} beans, in order), the event loops of the data path, the exposed
 * regions, discovery of
 * {@link dev.rpma.spring.annotation.RpmaConnectionHandler}, {@link dev.rpma.spring.annotation.RpmaMessageHandler}
 * and {@link dev.rpma.spring.annotation.RpmaSessionEvent} methods, the message codecs, and the
 * lifecycle that checks the handlers, listens, starts accepting, and stops gracefully.
 *
 * <p>The server bean exists from the start but listens only when the lifecycle starts it, after every
 * singleton (and so every handler) is there: a handler that is missing, misdirected or of a wrong
 * signature fails the start before anything native is created.
 */
// after Jackson's, so that its JsonMapper is there when the JSON codec's condition looks for it
@AutoConfiguration(afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnClass(Rpma.class)
@ConditionalOnBooleanProperty(name = "rpma.server.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RpmaProperties.class)
@Import(RpmaJsonCodecConfiguration.class)
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
    static RpmaHandlerBeanPostProcessor rpmaHandlerBeanPostProcessor(RpmaHandlerRegistry rpmaHandlerRegistry) {
        return new RpmaHandlerBeanPostProcessor(rpmaHandlerRegistry);
    }

    /** UTF-8 text for {@code String} parameters and return values; after the application's own codecs. */
    @Bean
    @ConditionalOnMissingBean(name = "rpmaStringCodec")
    @Order(Ordered.LOWEST_PRECEDENCE - 10)
    RpmaStringCodec rpmaStringCodec() {
        return new RpmaStringCodec();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RpmaServer rpmaServer(Rpma rpma, RpmaProperties properties, RpmaHandlerRegistry handlers,
            ObjectProvider<RpmaConnectionConfigCustomizer> customizers, ObjectProvider<RpmaServerObserver> observers,
            ObjectProvider<RpmaSessionListener> sessionListeners, ObjectProvider<RpmaRegionDefinition> regions,
            ObjectProvider<RpmaAdmission> admissionSteps) {
        Map<String, RpmaAdmission> admissions = RpmaAdmissions.create(properties, admissionSteps.orderedStream().toList());
        RpmaConnectionConfigFactory configs = new RpmaConnectionConfigFactory(properties,
                customizers.orderedStream().toList());
        RpmaServerObserver observer = CompositeRpmaServerObserver.of(observers.orderedStream().toList());
        List<RpmaSessionListener> everyEndpoint = sessionListeners.orderedStream().toList();
        return new RpmaServer(rpma, RpmaServerSettingsFactory.create(properties, regions.orderedStream().toList()),
                new RpmaServer.Components() {

                    @Override
                    public RpmaRequestHandler handler(String endpoint) {
                        return handlers.connectionHandler(endpoint);
                    }

                    @Override
                    public Map<String, RpmaMessageListener> messageListeners(String endpoint) {
                        return handlers.messageListeners(endpoint);
                    }

                    @Override
                    public @Nullable RpmaConnectionConfig requestConfig(Rpma library, RpmaEndpointSettings endpoint,
                            RpmaQueueSizes needed) {
                        return configs.create(library, endpoint, needed);
                    }

                    @Override
                    public @Nullable RpmaAdmission admission(String endpoint) {
                        return admissions.get(endpoint);
                    }

                    @Override
                    public RpmaServerObserver observer() {
                        return observer;
                    }

                    @Override
                    public List<RpmaSessionListener> sessionListeners(String endpoint) {
                        List<RpmaSessionListener> listeners = new java.util.ArrayList<>(everyEndpoint);
                        listeners.addAll(handlers.sessionListeners(endpoint));
                        return listeners;
                    }
                });
    }

    /** The exposed memory regions: fill them before the server starts, or whenever clients may read. */
    @Bean
    @ConditionalOnMissingBean
    RpmaRegions rpmaRegions(RpmaServer rpmaServer) {
        return rpmaServer.regions();
    }

    @Bean
    @ConditionalOnMissingBean
    RpmaServerLifecycle rpmaServerLifecycle(RpmaServer rpmaServer, RpmaHandlerRegistry rpmaHandlerRegistry,
            ObjectProvider<RpmaMessageCodec> codecs, ApplicationEventPublisher publisher) {
        return new RpmaServerLifecycle(rpmaServer, rpmaHandlerRegistry, () -> codecs.orderedStream().toList(), publisher);
    }
}
