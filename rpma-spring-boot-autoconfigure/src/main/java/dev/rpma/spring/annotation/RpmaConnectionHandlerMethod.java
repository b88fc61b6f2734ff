package dev.rpma.spring.annotation;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

import org.springframework.util.ReflectionUtils;

import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaRequestHandler;

/** An {@link RpmaConnectionHandler} method of a bean, bound to its endpoint. */
public final class RpmaConnectionHandlerMethod implements RpmaRequestHandler {

    private final Object bean;

    private final Method method;

    private final String endpoint;

    private final String beanName;

    /** Built once: the acceptor asks for it at every request, for the observer's metrics and traces. */
    private final String name;

    private final boolean[] endpointNameArguments;

    RpmaConnectionHandlerMethod(Object bean, String beanName, Method method, String endpoint) {
        this.bean = bean;
        this.beanName = beanName;
        this.method = method;
        this.endpoint = endpoint;
        this.name = RpmaHandlerRegistry.nameOf(method);
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
                throw invalid("has a parameter of type " + types[i].getName() + "; connection handler methods take an"
                        + " RpmaIncomingRequest and optionally a String (the endpoint name)");
            }
        }
        if (!hasRequest) {
            throw invalid("must take an RpmaIncomingRequest parameter");
        }
        if (method.getReturnType() != void.class) {
            throw invalid("returns " + method.getReturnType().getName() + ", which would be ignored: a connection"
                    + " handler decides by calling connect() or reject() on the request, and returns void");
        }
        ReflectionUtils.makeAccessible(method);
    }

    private RpmaHandlerConfigurationException invalid(String why) {
        return new RpmaHandlerConfigurationException("@RpmaConnectionHandler method " + this.name + " " + why,
                this.endpoint, RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
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
        // Method.invoke rather than a MethodHandle held in a field: code compiled by C1, the JIT's first tier,
        // cannot inline the handle's call, which took 0.1-0.2 us more handler CPU per request (measured with
        // -XX:TieredStopAtLevel=1); this array costs 24 bytes
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
