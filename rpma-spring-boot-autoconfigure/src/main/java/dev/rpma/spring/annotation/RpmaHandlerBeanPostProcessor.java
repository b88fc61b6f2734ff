package dev.rpma.spring.annotation;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EmbeddedValueResolverAware;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

import dev.rpma.server.RpmaEndpointSettings;

/**
 * Finds {@link RpmaConnectionHandler}, {@link RpmaMessageHandler} and {@link RpmaSessionEvent}
 * methods on beans (through proxies, meta-annotations included) and registers them with the
 * {@link RpmaHandlerRegistry}. Classes without any are remembered so each is inspected once.
 */
public class RpmaHandlerBeanPostProcessor implements BeanPostProcessor, EmbeddedValueResolverAware {

    private final RpmaHandlerRegistry registry;

    private final Set<Class<?>> classesWithoutHandlers = ConcurrentHashMap.newKeySet();

    private @Nullable StringValueResolver resolver;

    public RpmaHandlerBeanPostProcessor(RpmaHandlerRegistry registry) {
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
        Map<Method, RpmaConnectionHandler> connection = find(targetClass, RpmaConnectionHandler.class);
        Map<Method, RpmaMessageHandler> messages = find(targetClass, RpmaMessageHandler.class);
        Map<Method, RpmaSessionEvent> events = find(targetClass, RpmaSessionEvent.class);
        RpmaConnectionHandler connectionOnClass = AnnotatedElementUtils.findMergedAnnotation(targetClass,
                RpmaConnectionHandler.class);
        RpmaMessageHandler messagesOnClass = AnnotatedElementUtils.findMergedAnnotation(targetClass,
                RpmaMessageHandler.class);
        checkClassLevel(beanName, targetClass, connectionOnClass, connection, "@RpmaConnectionHandler",
                (annotation) -> endpoint(annotation.endpoint(), null));
        checkClassLevel(beanName, targetClass, messagesOnClass, messages, "@RpmaMessageHandler",
                (annotation) -> endpoint(annotation.endpoint(), null));
        if (connection.isEmpty() && messages.isEmpty() && events.isEmpty()) {
            this.classesWithoutHandlers.add(targetClass);
            return bean;
        }
        connection.forEach((method, annotation) -> this.registry.register(new RpmaConnectionHandlerMethod(bean, beanName,
                AopUtils.selectInvocableMethod(method, bean.getClass()),
                endpoint(annotation.endpoint(), (connectionOnClass != null) ? connectionOnClass.endpoint() : null))));
        messages.forEach((method, annotation) -> this.registry.registerMessageHandler(bean, beanName,
                AopUtils.selectInvocableMethod(method, bean.getClass()),
                endpoint(annotation.endpoint(), (messagesOnClass != null) ? messagesOnClass.endpoint() : null),
                resolve(annotation.route())));
        events.forEach((method, annotation) -> this.registry.register(new RpmaSessionEventMethod(bean,
                AopUtils.selectInvocableMethod(method, bean.getClass()), endpoint(annotation.endpoint(), null))));
        return bean;
    }

    private static <A extends Annotation> Map<Method, A> find(Class<?> targetClass, Class<A> type) {
        return MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<A>) (method) -> AnnotatedElementUtils.findMergedAnnotation(method, type));
    }

    /** A class-level annotation only sets the endpoint of its annotated methods: without any it is a mistake. */
    private static <A extends Annotation> void checkClassLevel(String beanName, Class<?> targetClass, @Nullable A onClass,
            Map<Method, A> methods, String annotation, Function<A, String> endpoint) {
        if (onClass != null && methods.isEmpty()) {
            // silently ignoring it would surface later as "no handler" for an endpoint, or not at all
            throw new RpmaHandlerConfigurationException("Bean '" + beanName + "' (" + targetClass.getName() + ") is"
                    + " annotated " + annotation + " but none of its methods is", endpoint.apply(onClass),
                    RpmaHandlerConfigurationException.Problem.NO_HANDLER_METHOD);
        }
    }

    private String endpoint(String onMethod, @Nullable String onClass) {
        String endpoint = onMethod;
        if (!StringUtils.hasText(endpoint) && onClass != null) {
            endpoint = onClass;
        }
        endpoint = resolve(endpoint);
        return StringUtils.hasText(endpoint) ? endpoint.trim() : RpmaEndpointSettings.DEFAULT_ENDPOINT;
    }

    private String resolve(String value) {
        if (StringUtils.hasText(value) && this.resolver != null) {
            String resolved = this.resolver.resolveStringValue(value);
            return (resolved != null) ? resolved : value;
        }
        return value;
    }
}
