package dev.rpma.spring.annotation;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

import org.springframework.util.ReflectionUtils;

import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaRequestHandler;

/** An {@link RpmaConnectionHandler} method of a bean, bound to its endpoint. */
public final class RpmaHandlerMethod implements RpmaRequestHandler {

    private final Object bean;

    private final Method method;

    private final String endpoint;

    private final String beanName;

    /** Built once: the acceptor asks for it at every request, for the observer's metrics and traces. */
    private final String name;

    private final boolean[] endpointNameArguments;

    RpmaHandlerMethod(Object bean, String beanName, Method method, String endpoint) {
        this.bean = bean;
        this.beanName = beanName;
        this.method = method;
        this.endpoint = endpoint;
        this.name = method.getDeclaringClass().getSimpleName() + "." + method.getName();
        Class<?>[] types = method.getParameterTypes();
        this.endpointNameArguments = new boolean[types.length];
        boolean hasRequest = false;
        for (int i = 0; i < types.length; i++) {
            if (types[i] == RpmaIncomingRequest.class) {
                hasRequest = true;
            }
            else if (types[i] == String.class) {
                this.endpointNameArguments[i] = true;
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
        // Method.invoke rather than a MethodHandle held in a field: measured, the handle's call took about
        // 0.1-0.2 us more handler CPU per request (it cannot be inlined), against the 24 B of this array
        Object[] args = new Object[this.endpointNameArguments.length];
        for (int i = 0; i < args.length; i++) {
            args[i] = this.endpointNameArguments[i] ? request.endpointName() : request;
        }
        try {
            this.method.invoke(this.bean, args);
        }
        catch (InvocationTargetException ex) {
            Throwable target = ex.getTargetException();
            if (target instanceof Exception exception) {
                throw exception;
            }
            throw (Error) target;
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
