package dev.rpma.spring.annotation;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EmbeddedValueResolverAware;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

import dev.rpma.spring.server.RpmaEndpointSettings;

/**
 * Finds {@link RpmaConnectionHandler} methods on beans (through proxies, meta-annotations
 * included) and registers them with the {@link RpmaHandlerRegistry}. Classes without handlers are
 * remembered so each is inspected once.
 */
public class RpmaConnectionHandlerBeanPostProcessor implements BeanPostProcessor, EmbeddedValueResolverAware {

    private final RpmaHandlerRegistry registry;

    private final Set<Class<?>> classesWithoutHandlers = ConcurrentHashMap.newKeySet();

    private StringValueResolver resolver;

    public RpmaConnectionHandlerBeanPostProcessor(RpmaHandlerRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void setEmbeddedValueResolver(StringValueResolver resolver) {
        this.resolver = resolver;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        if (this.classesWithoutHandlers.contains(targetClass)) {
            return bean;
        }
        Map<Method, RpmaConnectionHandler> methods = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<RpmaConnectionHandler>) (method) -> AnnotatedElementUtils
                        .findMergedAnnotation(method, RpmaConnectionHandler.class));
        RpmaConnectionHandler onClass = AnnotatedElementUtils.findMergedAnnotation(targetClass, RpmaConnectionHandler.class);
        if (methods.isEmpty()) {
            if (onClass != null) {
                // silently ignoring it would surface later as "no handler" for an endpoint, or not at all
                throw new RpmaHandlerConfigurationException("Bean '" + beanName + "' (" + targetClass.getName()
                        + ") is annotated @RpmaConnectionHandler but none of its methods is", endpoint(onClass, null),
                        RpmaHandlerConfigurationException.Problem.NO_HANDLER_METHOD);
            }
            this.classesWithoutHandlers.add(targetClass);
            return bean;
        }
        methods.forEach((method, annotation) -> {
            String endpoint = endpoint(annotation, onClass);
            Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
            this.registry.register(new RpmaHandlerMethod(bean, beanName, invocable, endpoint));
        });
        return bean;
    }

    private String endpoint(RpmaConnectionHandler onMethod, RpmaConnectionHandler onClass) {
        String endpoint = onMethod.endpoint();
        if (!StringUtils.hasText(endpoint) && onClass != null) {
            endpoint = onClass.endpoint();
        }
        if (StringUtils.hasText(endpoint) && this.resolver != null) {
            endpoint = this.resolver.resolveStringValue(endpoint);
        }
        return StringUtils.hasText(endpoint) ? endpoint.trim() : RpmaEndpointSettings.DEFAULT_ENDPOINT;
    }
}
