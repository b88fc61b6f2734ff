package dev.rpma.binding.internal;

import com.sun.jna.Callback;
import com.sun.jna.CallbackReference;
import com.sun.jna.Pointer;
import org.jspecify.annotations.Nullable;

/**
 * A Java implementation of librpma's variadic {@code rpma_log_function}, for
 * {@code rpma_log_set_function}. Internal API.
 *
 * <p>The callback declares the five fixed parameters and then eight 64-bit integers: on x86-64
 * System V a variadic callee finds its integer and pointer arguments where these are read (r9, then
 * the stack), and librpma's formats use only integers, pointers and strings. The format is expanded
 * here, reading exactly the arguments its conversions consume. errno is saved on entry and restored
 * on exit, because librpma logs a provider failure before returning RPMA_E_PROVIDER and its caller
 * then reads errno.
 */
public final class NativeLogFunction {

    /**
     * {@code RPMA_LOG_USE_DEFAULT_FUNCTION}, which librpma.h defines as {@code (NULL)}: librpma's
     * syslog/stderr logger. (Any other value is called as a function pointer.)
     */
    public static final long DEFAULT_FUNCTION = 0;

    /** Where formatted lines go. */
    @FunctionalInterface
    public interface Sink {
        void log(int level, String fileName, int lineNumber, String functionName, String message);
    }

    /** The JNA view of {@code rpma_log_function} with its variadic tail as eight integers. */
    public interface VariadicLogCallback extends Callback {
        void invoke(int level, String fileName, int lineNumber, String functionName, String format, long a0, long a1,
                long a2, long a3, long a4, long a5, long a6, long a7);
    }

    /** Where the one callback sends lines; replaced by each {@link #functionPointer(Sink)}. */
    private static volatile @Nullable Sink sink;

    /**
     * The one callback, created once and strongly held for the JVM's life: JNA references callbacks
     * weakly, and librpma keeps whatever pointer it was given, so a callback must never be replaced
     * by a new one (the old pointer, still installed in librpma, would be collected and freed).
     */
    private static @Nullable VariadicLogCallback callback;

    private static long pointer;

    private NativeLogFunction() {
    }

    /**
     * The function pointer of the callback, which formats each line and hands it to {@code sink}.
     * Always the same pointer, valid for the JVM's life; the latest {@code sink} given wins.
     */
    public static synchronized long functionPointer(Sink sink) {
        NativeLogFunction.sink = sink;
        if (callback == null) {
            callback = NativeLogFunction::invoke;
            pointer = Pointer.nativeValue(CallbackReference.getFunctionPointer(callback));
        }
        return pointer;
    }

    private static void invoke(int level, String file, int line, String function, String format, long a0, long a1,
            long a2, long a3, long a4, long a5, long a6, long a7) {
        long errnoAddress = LibC.__errno_location();
        Pointer errno = new Pointer(errnoAddress);
        int savedErrno = errno.getInt(0);
        try {
            Sink target = sink;
            if (target != null) {
                String message = CFormat.format(format, new long[] { a0, a1, a2, a3, a4, a5, a6, a7 });
                target.log(level, file, line, function, message);
            }
        }
        catch (RuntimeException | Error ignored) {
            // an exception must never unwind into librpma's C frames
        }
        finally {
            errno.setInt(0, savedErrno);
        }
    }
}
