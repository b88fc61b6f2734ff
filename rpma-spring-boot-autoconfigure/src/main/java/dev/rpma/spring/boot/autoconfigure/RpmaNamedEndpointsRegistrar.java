package dev.rpma.spring.boot.autoconfigure;

import java.util.Map;
import java.util.function.Function;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import dev.rpma.jna.RpmaEndpoint;
import dev.rpma.jna.RpmaPeer;
import dev.rpma.spring.server.RpmaEndpointServer;
import dev.rpma.spring.server.RpmaEndpointSettings;
import dev.rpma.spring.server.RpmaServer;

/**
 * Registers, for each endpoint under {@code rpma.server.endpoints.<name>}, its {@link RpmaEndpoint}
 * ({@code rpmaEndpoint.<name>}) and the {@link RpmaPeer} it listens through ({@code rpmaPeer.<name>}),
 * qualified by the endpoint's name: {@code @Qualifier("replica") RpmaPeer peer}. They are fallback
 * beans, so an unqualified injection still gets the default endpoint's. The server owns and releases
 * them: the context never closes them.
 */
class RpmaNamedEndpointsRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {

    private Environment environment;

    private BeanFactory beanFactory;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, RpmaProperties.Endpoint> endpoints = Binder.get(this.environment)
            .bind("rpma.server.endpoints", Bindable.mapOf(String.class, RpmaProperties.Endpoint.class))
            .orElse(Map.of());
        for (String name : endpoints.keySet()) {
            if (RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(name)) {
                continue; // refused with its property by RpmaEndpointSettingsFactory
            }
            register(registry, "rpmaEndpoint." + name, RpmaEndpoint.class, name, RpmaEndpointServer::endpoint);
            register(registry, "rpmaPeer." + name, RpmaPeer.class, name, (server) -> server.endpoint().peer());
        }
    }

    private <T> void register(BeanDefinitionRegistry registry, String beanName, Class<T> type, String endpoint,
            Function<RpmaEndpointServer, T> extractor) {
        RootBeanDefinition definition = new RootBeanDefinition(type);
        definition.setInstanceSupplier(() -> extractor.apply(endpointServer(endpoint)));
        definition.addQualifier(new AutowireCandidateQualifier(Qualifier.class, endpoint));
        definition.setFallback(true);
        // only made when injected, so a user's RpmaServer without the endpoint fails only where it is needed
        definition.setLazyInit(true);
        // RpmaEndpoint and RpmaPeer are AutoCloseable: without this the context would close them
        definition.setDestroyMethodName("");
        registry.registerBeanDefinition(beanName, definition);
    }

    private RpmaEndpointServer endpointServer(String endpoint) {
        RpmaEndpointServer server = this.beanFactory.getBean(RpmaServer.class).endpoint(endpoint);
        if (server == null) {
            throw new IllegalStateException("The RpmaServer bean has no endpoint '" + endpoint
                    + "', which is configured under 'rpma.server.endpoints." + endpoint + "'");
        }
        return server;
    }
}
