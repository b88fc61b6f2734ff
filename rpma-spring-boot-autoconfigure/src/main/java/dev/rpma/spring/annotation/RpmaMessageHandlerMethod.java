package dev.rpma.spring.annotation;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.util.ReflectionUtils;

import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaSession;

/**
 * An {@link RpmaMessageHandler} method of a bean, bound to its endpoint and route, as the server
 * calls it for each message: its parameters are made from the message and the session, and its
 * return value becomes the reply's payload.
 *
 * <p>The method is called through one {@link MethodHandle} adapted once, at start, to take the
 * message and the session and return an {@code Object}: a call allocates nothing for its arguments
 * (a reflective call would need an array per message), only what a {@code byte[]} parameter or a
 * codec makes.
 */
public final class RpmaMessageHandlerMethod implements RpmaMessageListener {

    private static final MethodHandle COPY;

    private static final MethodHandle DECODE;

    private static final MethodHandle IDENTITY_BUFFER = MethodHandles.identity(ByteBuffer.class);

    private static final MethodHandle IDENTITY_SESSION = MethodHandles.identity(RpmaSession.class);

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            COPY = lookup.findStatic(RpmaMessageHandlerMethod.class, "copy",
                    MethodType.methodType(byte[].class, ByteBuffer.class));
            DECODE = lookup.findVirtual(RpmaMessageCodec.class, "decode",
                    MethodType.methodType(Object.class, ByteBuffer.class, Class.class));
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Method method;

    private final String beanName;

    private final String endpoint;

    private final String route;

    private final String name;

    /** {@code (ByteBuffer message, RpmaSession session) Object}. */
    private final MethodHandle invoker;

    /** The codec of the return type, or {@code null} for void, {@code ByteBuffer}, {@code byte[]}, or one found per value. */
    private final @Nullable RpmaMessageCodec returnCodec;

    private final List<RpmaMessageCodec> codecs;

    /**
     * @throws RpmaHandlerConfigurationException when a parameter or the return type is not one a message
     *     handler may have, or no codec takes it
     */
    RpmaMessageHandlerMethod(Object bean, String beanName, Method method, String endpoint, String route,
            List<RpmaMessageCodec> codecs) {
        this.method = method;
        this.beanName = beanName;
        this.endpoint = endpoint;
        this.route = route;
        this.codecs = codecs;
        this.name = RpmaHandlerRegistry.nameOf(method);
        Class<?>[] types = method.getParameterTypes();
        MethodHandle[] filters = new MethodHandle[types.length];
        int[] sources = new int[types.length];
        boolean payload = false;
        for (int i = 0; i < types.length; i++) {
            Class<?> type = types[i];
            if (type == RpmaSession.class) {
                filters[i] = IDENTITY_SESSION;
                sources[i] = 1;
                continue;
            }
            if (payload) {
                throw invalid("takes the message twice (a " + type.getName() + " after another payload parameter); take"
                        + " it once, as a ByteBuffer, a byte[], or a type a codec decodes",
                        RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
            }
            payload = true;
            if (type == ByteBuffer.class) {
                filters[i] = IDENTITY_BUFFER;
            }
            else if (type == byte[].class) {
                filters[i] = COPY;
            }
            else if (type.isPrimitive()) {
                throw invalid("has a parameter of type " + type.getName() + "; message handlers take the message as a"
                        + " ByteBuffer, a byte[], or a type a codec decodes, and the RpmaSession",
                        RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
            }
            else {
                RpmaMessageCodec codec = codecFor(type, true);
                filters[i] = MethodHandles.insertArguments(DECODE.bindTo(codec), 1, type)
                    .asType(MethodType.methodType(type, ByteBuffer.class));
            }
        }
        Class<?> returns = method.getReturnType();
        if (returns.isPrimitive() && returns != void.class) {
            throw invalid("returns a " + returns.getName() + "; return void, a ByteBuffer, a byte[], or a type a codec"
                    + " encodes", RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
        }
        boolean raw = returns == void.class || returns == ByteBuffer.class || returns == byte[].class
                || returns == Object.class;
        this.returnCodec = raw ? null : codecFor(returns, false);
        ReflectionUtils.makeAccessible(method);
        try {
            MethodHandle target = MethodHandles.lookup().unreflect(method);
            if (!Modifier.isStatic(method.getModifiers())) {
                target = target.bindTo(bean);
            }
            this.invoker = adapt(target, filters, sources, returns);
        }
        catch (IllegalAccessException ex) {
            throw invalid("cannot be called: " + ex.getMessage(), RpmaHandlerConfigurationException.Problem.INVALID_SIGNATURE);
        }
    }

    /**
     * {@code target} as {@code (ByteBuffer, RpmaSession) Object}, with only the adaptations its
     * parameters need: every filter and permutation is one more step of each call through a handle
     * that the JIT cannot inline (the handle is not a constant), and the plain {@code (ByteBuffer,
     * RpmaSession)} and {@code (ByteBuffer)} handlers, the raw data path's, need none.
     */
    private static MethodHandle adapt(MethodHandle target, MethodHandle[] filters, int[] sources, Class<?> returns) {
        MethodType callType = MethodType.methodType(Object.class, ByteBuffer.class, RpmaSession.class);
        boolean identities = true;
        for (MethodHandle filter : filters) {
            identities &= filter == IDENTITY_BUFFER || filter == IDENTITY_SESSION;
        }
        if (identities && Arrays.equals(sources, new int[] { 0, 1 })) {
            return target.asType(callType);
        }
        if (identities && Arrays.equals(sources, new int[] { 0 })) {
            return MethodHandles.dropArguments(target, 1, RpmaSession.class).asType(callType);
        }
        MethodHandle filtered = MethodHandles.filterArguments(target, 0, filters);
        MethodType shape = MethodType.methodType(returns, ByteBuffer.class, RpmaSession.class);
        return MethodHandles.permuteArguments(filtered, shape, sources).asType(callType);
    }

    private RpmaMessageCodec codecFor(Class<?> type, boolean decode) {
        for (RpmaMessageCodec codec : this.codecs) {
            if (decode ? codec.canDecode(type) : codec.canEncode(type)) {
                return codec;
            }
        }
        throw invalid((decode ? "takes a " : "returns a ") + type.getName() + ", but no RpmaMessageCodec "
                + (decode ? "decodes" : "encodes") + " it; the codecs are " + this.codecs.stream()
                    .map((codec) -> codec.getClass().getSimpleName()).toList(),
                RpmaHandlerConfigurationException.Problem.NO_CODEC);
    }

    private RpmaHandlerConfigurationException invalid(String why, RpmaHandlerConfigurationException.Problem problem) {
        return new RpmaHandlerConfigurationException("@RpmaMessageHandler method " + this.name + " " + why, this.endpoint,
                problem);
    }

    @Override
    public @Nullable Object onMessage(ByteBuffer message, RpmaSession session) throws Exception {
        Object result;
        try {
            result = (Object) this.invoker.invokeExact(message, session);
        }
        catch (Exception | Error ex) {
            throw ex;
        }
        catch (Throwable ex) {
            throw new IllegalStateException(ex);
        }
        if (result == null || result instanceof ByteBuffer || result instanceof byte[]) {
            return result;
        }
        RpmaMessageCodec codec = (this.returnCodec != null) ? this.returnCodec : codecFor(result.getClass(), false);
        return codec.encode(result, session);
    }

    private static byte[] copy(ByteBuffer message) {
        byte[] bytes = new byte[message.remaining()];
        message.get(message.position(), bytes);
        return bytes;
    }

    public String endpoint() {
        return this.endpoint;
    }

    public String route() {
        return this.route;
    }

    public Method method() {
        return this.method;
    }

    /** {@code Class.method} for logs and metrics. */
    @Override
    public String name() {
        return this.name;
    }

    @Override
    public String toString() {
        return name() + " (bean '" + this.beanName + "', endpoint '" + this.endpoint + "'"
                + (this.route.isEmpty() ? "" : ", route '" + this.route + "'") + ")";
    }
}
