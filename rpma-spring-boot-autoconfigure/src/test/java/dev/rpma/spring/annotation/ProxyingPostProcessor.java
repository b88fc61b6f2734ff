package dev.rpma.spring.annotation;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.Ordered;

/**
 * Wraps the beans of the given types in a proxy before handler discovery sees them, as an aspect
 * would, and records the name of every method called through a proxy.
 */
public class ProxyingPostProcessor implements BeanPostProcessor, Ordered {

    /** The methods called through the proxies, in call order. */
    public final List<String> advised = new CopyOnWriteArrayList<>();

    private final boolean proxyTargetClass;

    private final List<Class<?>> proxied;

    /**
     * {@code proxyTargetClass}: a class-based proxy rather than a JDK proxy of the bean's
     * interfaces; {@code proxied}: the types of the beans to wrap.
     */
    public ProxyingPostProcessor(boolean proxyTargetClass, Class<?>... proxied) {
        this.proxyTargetClass = proxyTargetClass;
        this.proxied = List.of(proxied);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (this.proxied.stream().noneMatch((type) -> type.isInstance(bean))) {
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
