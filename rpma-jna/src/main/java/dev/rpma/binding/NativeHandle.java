package dev.rpma.binding;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * One native object with one owner: the pointer is handed to librpma only between
 * {@link #acquire()} and {@link #release()}, and freed exactly once, by the thread that won
 * {@link #beginClose()}, after every call in flight has returned.
 *
 * <p>The state word counts the calls in flight and carries a closed bit, so a call racing with
 * close either gets in before the bit is set (and close waits for it) or fails with an
 * {@link IllegalStateException} without touching native code. Two atomic operations per call;
 * no lock on the data path. An owner that must not wait for another thread's call (an event loop,
 * while another thread is blocked in a native wait on the object) uses {@link #beginCloseIfIdle()}
 * instead, and tries again later; a freed bit makes sure the pointer is still handed out once.
 */
abstract class NativeHandle {

    private static final int CLOSED = 0x8000_0000;

    /** Set with {@link #CLOSED} once the pointer was handed out to be freed. */
    private static final int FREED = 0x4000_0000;

    private static final int CALLS = ~(CLOSED | FREED);

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(NativeHandle.class, "state", int.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    final Rpma rpma;

    private final long pointer;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    NativeHandle(Rpma rpma, long pointer) {
        if (pointer == 0) {
            throw new IllegalStateException("librpma returned success and a NULL " + kind());
        }
        this.rpma = rpma;
        this.pointer = pointer;
    }

    /** What this object is, for messages: "connection", "endpoint", ... */
    abstract String kind();

    /** The pointer, valid until the matching {@link #release()}; fails once closing has begun. */
    final long acquire() {
        for (;;) {
            int current = (int) STATE.getVolatile(this);
            if (current < 0) {
                throw closedError();
            }
            if (STATE.weakCompareAndSet(this, current, current + 1)) {
                return this.pointer;
            }
        }
    }

    final void release() {
        STATE.getAndAdd(this, -1);
    }

    /**
     * Marks this object closed and waits until no call is in flight. Returns the pointer to free to
     * exactly one caller, {@code 0} to every other (already closed).
     */
    final long beginClose() {
        if (!markClosed()) {
            return 0;
        }
        int spins = 0;
        while (((int) STATE.getVolatile(this) & CALLS) != 0) {
            if (++spins < 1000) {
                Thread.onSpinWait();
            }
            else {
                LockSupport.parkNanos(50_000);
            }
        }
        return claim();
    }

    /**
     * Marks this object closed, so that no new call starts, without waiting: returns the pointer to
     * free when no call is in flight now and no caller had it yet, else {@code 0}. While calls are in
     * flight, call it again later until {@link #isFreed()}.
     */
    final long beginCloseIfIdle() {
        markClosed();
        return claim();
    }

    /** Whether the pointer was handed out to be freed (by {@link #beginClose()} or {@link #beginCloseIfIdle()}). */
    final boolean isFreed() {
        return ((int) STATE.getVolatile(this) & FREED) != 0;
    }

    /** Sets the closed bit; {@code true} for the caller that set it. */
    private boolean markClosed() {
        for (;;) {
            int current = (int) STATE.getVolatile(this);
            if (current < 0) {
                return false;
            }
            if (STATE.compareAndSet(this, current, current | CLOSED)) {
                return true;
            }
        }
    }

    /** The pointer, to the one caller that finds no call in flight and the pointer not yet handed out; else 0. */
    private long claim() {
        for (;;) {
            int current = (int) STATE.getVolatile(this);
            if ((current & (FREED | CALLS)) != 0) {
                return 0;
            }
            if (STATE.compareAndSet(this, current, current | FREED)) {
                return this.pointer;
            }
        }
    }

    /** Whether closing has begun; then every method fails without a native call. */
    public final boolean isClosed() {
        return (int) STATE.getVolatile(this) < 0;
    }

    final IllegalStateException closedError() {
        return new IllegalStateException("This " + kind() + " is closed; create a new one");
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + (isClosed() ? "[closed]" : "[open]");
    }
}
