package dev.rpma.spring.annotation;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.springframework.util.ReflectionUtils;

import dev.rpma.server.RpmaSession;
import dev.rpma.server.RpmaSessionEnd;
import dev.rpma.server.RpmaSessionListener;

/**
 * An {@link RpmaSessionEvent} method of a bean, bound to its endpoint: a listener that calls it when
 * a session is established, or when one ends if the method takes an {@link RpmaSessionEnd}.
 */
public final class RpmaSessionEventMethod implements RpmaSessionListener {

    private enum Argument {
        SESSION, END, ENDPOINT_NAME
    }

    private final Object bean;

    private final Method method;

    private final String endpoint;

    private final String name;

    private final Argument[] arguments;

    private final boolean onEnd;

    RpmaSessionEventMethod(Object bean, Method method, String endpoint) {
        this.bean = bean;
        this.method = method;
        this.endpoint = endpoint;
        this.name = RpmaHandlerRegistry.nameOf(method);
        Class<?>[] types = method.getParameterTypes();
        this.arguments = new Argument[types.length];
        boolean onEnd = false;
        boolean hasSession = false;
        for (int i = 0; i < types.length; i++) {
            if (types[i] == RpmaSession.class) {
                this.arguments[i] = Argument.SESSION;
                hasSession = true;
            }
            else if (types[i] == RpmaSessionEnd.class) {
                this.arguments[i] = Argument.END;
                onEnd = true;
            }
            else if (types[i] == String.class) {
                this.arguments[i] = Argument.ENDPOINT_NAME;
            }
            else {
                throw invalid("has a parameter of type " + types[i].getName() + "; it may take the RpmaSession, an"
                        + " RpmaSessionEnd (to be called when sessions end) and a String (the endpoint name)");
            }
        }
        if (!hasSession && !onEnd) {
            throw invalid("takes neither the RpmaSession nor an RpmaSessionEnd, so it could not tell which session");
        }
        if (method.getReturnType() != void.class) {
            throw invalid("returns " + method.getReturnType().getName() + ", which would be ignored; return void");
        }
        this.onEnd = onEnd;
        ReflectionUtils.makeAccessible(method);
    }

    private RpmaHandlerConfigurationException invalid(String why) {
        return new RpmaHandlerConfigurationException("@RpmaSessionEvent method " + this.name + " " + why, this.endpoint,
                RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
    }

    public String endpoint() {
        return this.endpoint;
    }

    @Override
    public void sessionEstablished(RpmaSession session) {
        if (!this.onEnd) {
            invoke(session, null);
        }
    }

    @Override
    public void sessionEnded(RpmaSession session, RpmaSessionEnd end) {
        if (this.onEnd) {
            invoke(session, end);
        }
    }

    private void invoke(RpmaSession session, @Nullable RpmaSessionEnd end) {
        Object[] args = new Object[this.arguments.length];
        for (int i = 0; i < args.length; i++) {
            args[i] = switch (this.arguments[i]) {
                case SESSION -> session;
                case END -> end;
                case ENDPOINT_NAME -> session.endpointName();
            };
        }
        try {
            this.method.invoke(this.bean, args);
        }
        catch (InvocationTargetException ex) {
            ReflectionUtils.rethrowRuntimeException(ex.getTargetException());
        }
        catch (IllegalAccessException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public String toString() {
        return this.name + " (endpoint '" + this.endpoint + "', when sessions " + (this.onEnd ? "end)" : "are established)");
    }
}
