package dev.rpma.binding;

import org.jspecify.annotations.Nullable;

/**
 * A thread that calls librpma often (an event loop, a handler thread): it keeps the native scratch
 * memory of its calls (out-parameters, private data) in a field of its own, where any other thread
 * finds it through a {@link ThreadLocal}, a lookup on every call.
 */
public class RpmaThread extends Thread {

    /** Created and used only by this thread. */
    private @Nullable Scratch scratch;

    public RpmaThread(Runnable task, String name) {
        super(task, name);
    }

    Scratch scratch() {
        if (this.scratch == null) {
            this.scratch = new Scratch();
        }
        return this.scratch;
    }
}
