package dev.rpma.spring.annotation;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.UndeclaredThrowableException;

import org.springframework.util.ReflectionUtils;

import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaRequestHandler;

/** An {@link RpmaConnectionHandler} method of a bean, bound to its endpoint. */
public final class RpmaHandlerMethod implements RpmaRequestHandler {

    private final Object bean;

    private final Method method;

    private final String endpoint;

    private final String beanName;

    /** Resolved once: the acceptor asks for it at every request, for the observer's metrics and traces. */
    private final String name;

    /**
     * The method as {@code (bean, request, endpointName)}, whatever the order of its parameters: unlike
     * {@link Method#invoke}, no argument array per request, and the target's exceptions come unwrapped.
     */
    private final MethodHandle invoker;

    private final boolean takesEndpointName;

    RpmaHandlerMethod(Object bean, String beanName, Method method, String endpoint) {
        this.bean = bean;
        this.beanName = beanName;
        this.method = method;
        this.endpoint = endpoint;
        this.name = method.getDeclaringClass().getSimpleName() + "." + method.getName();
        Class<?>[] types = method.getParameterTypes();
        boolean hasRequest = false;
        boolean hasEndpointName = false;
        for (int i = 0; i < types.length; i++) {
            if (types[i] == RpmaIncomingRequest.class) {
                hasRequest = true;
            }
            else if (types[i] == String.class) {
                hasEndpointName = true;
            }
            else {
                throw new RpmaHandlerConfigurationException("@RpmaConnectionHandler method " + name()
                        + " has a parameter of type " + types[i].getName() + "; handler methods take an"
                        + " RpmaIncomingRequest and optionally a String (the endpoint name)", endpoint,
                        RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
            }
        }
        if (!hasRequest) {
            throw new RpmaHandlerConfigurationException("@RpmaConnectionHandler method " + name()
                    + " must take an RpmaIncomingRequest parameter", endpoint,
                    RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
        }
        ReflectionUtils.makeAccessible(method);
        this.takesEndpointName = hasEndpointName;
        this.invoker = invoker(method);
    }

    private static MethodHandle invoker(Method method) {
        MethodHandle handle;
        try {
            handle = MethodHandles.lookup().unreflect(method);
        }
        catch (IllegalAccessException ex) {
            throw new IllegalStateException("Cannot call @RpmaConnectionHandler method " + method, ex);
        }
        if (Modifier.isStatic(method.getModifiers())) {
            handle = MethodHandles.dropArguments(handle, 0, Object.class);
        }
        Class<?>[] types = method.getParameterTypes();
        handle = handle.asType(handle.type().changeParameterType(0, Object.class).changeReturnType(void.class));
        int[] reorder = new int[types.length + 1];
        for (int i = 0; i < types.length; i++) {
            reorder[i + 1] = (types[i] == String.class) ? 2 : 1;
        }
        MethodType uniform = MethodType.methodType(void.class, Object.class, RpmaIncomingRequest.class, String.class);
        return MethodHandles.permuteArguments(handle, uniform, reorder);
    }

    /** The endpoint the method serves. */
    public String endpoint() {
        return this.endpoint;
    }

    public Method method() {
        return this.method;
    }

    public String beanName() {
        return this.beanName;
    }

    @Override
    public void handle(RpmaIncomingRequest request) throws Exception {
        String endpointName = this.takesEndpointName ? request.endpointName() : null;
        try {
            this.invoker.invokeExact(this.bean, request, endpointName);
        }
        catch (Exception | Error ex) {
            throw ex;
        }
        catch (Throwable ex) {
            throw new UndeclaredThrowableException(ex);
        }
    }

    /** {@code Class.method} for logs, metrics and traces. */
    @Override
    public String name() {
        return this.name;
    }

    @Override
    public String toString() {
        return name() + " (bean '" + this.beanName + "', endpoint '" + this.endpoint + "')";
    }
}
