package dev.rpma.spring.boot.autoconfigure.client;

import java.util.Map;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.GenericBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import dev.rpma.client.RpmaClient;

/**
 * One {@link RpmaClient} bean per {@code rpma.client.servers.<name>}: named {@code <name>RpmaClient},
 * qualified {@code @Qualifier("<name>")}, made by {@link RpmaClients#create} and closed with the
 * context. A bean of that name defined by the application wins.
 */
class RpmaClientBeanRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

    static final String SUFFIX = "RpmaClient";

    private Environment environment;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, RpmaClientProperties.Server> servers = Binder.get(this.environment)
            .bind("rpma.client.servers", Bindable.mapOf(String.class, RpmaClientProperties.Server.class))
            .orElse(Map.of());
        for (String name : servers.keySet()) {
            String beanName = name + SUFFIX;
            if (registry.containsBeanDefinition(beanName)) {
                continue;
            }
            GenericBeanDefinition definition = new GenericBeanDefinition();
            definition.setBeanClass(RpmaClient.class);
            definition.setFactoryBeanName("rpmaClients");
            definition.setFactoryMethodName("create");
            definition.getConstructorArgumentValues().addIndexedArgumentValue(0, name);
            definition.setDestroyMethodName("close");
            definition.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
            registry.registerBeanDefinition(beanName, definition);
        }
    }
}
