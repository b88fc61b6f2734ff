package dev.rpma.benchmarks.binding;

import java.lang.reflect.Field;
import java.lang.reflect.Method;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.internal.LibRpma;

/**
 * Reads, once per trial and never on a measured path, the native pointers the typed API keeps to
 * itself, so that the raw baseline calls librpma with exactly the objects the typed call uses.
 */
public final class Internals {

    private Internals() {
    }

    /** The {@code struct rpma_x *} of any typed object ({@code NativeHandle.pointer}). */
    public static long pointerOf(Object handle) {
        return (long) read(handle, "dev.rpma.binding.NativeHandle", "pointer");
    }

    /** The {@code struct rpma_cq *} of a completion queue. */
    public static long pointerOf(RpmaCompletionQueue cq) {
        return (long) read(cq, RpmaCompletionQueue.class.getName(), "cq");
    }

    /** The raw layer an {@link Rpma} calls. */
    public static LibRpma libOf(Rpma rpma) {
        try {
            Method lib = Rpma.class.getDeclaredMethod("lib");
            lib.setAccessible(true);
            return (LibRpma) lib.invoke(rpma);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("Rpma.lib() changed; update the benchmark", ex);
        }
    }

    private static Object read(Object target, String className, String fieldName) {
        try {
            Field field = Class.forName(className).getDeclaredField(fieldName);
            field.setAccessible(true);
            return field.get(target);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException(className + "." + fieldName + " changed; update the benchmark", ex);
        }
    }
}
