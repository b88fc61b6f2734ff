package dev.rpma.server.loop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.RpmaThread;
import dev.rpma.binding.io.Epoll;

/**
 * One event-loop thread: it waits in one {@code epoll_wait} over the file descriptors registered
 * with it (an endpoint's, connections' event channels, completion channels) and a wake-up, calls the
 * {@link IoHandler} of each readable fd, runs the tasks other threads hand it and its due timers,
 * and, after work, busy-polls the {@link BusyPoller}s it has for up to the busy-poll time before it
 * sleeps again. Acceptors and the data path are served by loops of this one class.
 *
 * <p>Everything registered with a loop is owned by its thread: handlers, pollers and timers are
 * called only there, and {@link #register}, {@link #unregister}, {@link #isReadableNow},
 * {@link #addBusyPoller}, {@link #removeBusyPoller}, {@link #schedule} and {@link #runSoon} may be
 * called only there (from a
 * handler, a task or a timer). Other threads hand work over with {@link #execute}, which costs one
 * {@code write(2)} to the wake-up fd per wait however many tasks come meanwhile.
 *
 * <p>A loop without a busy poll looks at its pollers after work until
 * {@value #EMPTY_LOOKS_BEFORE_SLEEPING} looks in a row find nothing before it sleeps; while its looks
 * find work it looks at its fds (and runs due timers) after every
 * {@value #WORKING_SPINS_PER_FD_LOOK} of them, as the busy poll does.
 *
 * <p>Busy polling: a loop that just did work looks at its pollers in a spin, yielding its CPU
 * between looks, and goes back to sleep only after a whole busy-poll time without work. While it
 * spins it still looks at its fds (and runs due timers), so that connection events are not held
 * back for ever, but seldom: after {@value #FD_LOOK_INTERVAL_MICROS} µs of spinning or
 * {@value #WORKING_SPINS_PER_FD_LOOK} spins that found work, whichever comes first, because an
 * {@code epoll_wait} can cost as much as a message (measured under soft-RoCE with
 * {@code -XX:TieredStopAtLevel=1}: with a look every 16 spins, one ping-pong client's median round
 * trip was 2.3 times a busy-polling C server's, against 1.1 times with these bounds). It does not
 * look at the fds registered with {@link #registerBusyPolled}: their pollers find that work, and a
 * completion channel's event read there would re-arm its queue, so that every further completion
 * raised an event of its own (under soft-RoCE that made each send's system call about 40 %
 * longer). Their readiness is taken once the loop sleeps.
 *
 * <p>The clock is read once per round, when a wait returns, at a look at the fds while spinning,
 * and on each spin without work; timers, and handlers through {@link #clockNanos()}, use that
 * reading. A clock read can be a system call: where the kernel's clock source has no vDSO reader
 * (HPET, as in an emulated machine) each costs microseconds: under soft-RoCE in such a machine, a
 * client's loop spent a fifth of its time reading the clock, most of it in four readings per round
 * of its own. So the start of a sleep, for the idle time, is read only before one sleep in
 * {@value #SLEEP_START_SAMPLE}; before the others it is the last reading plus the work that
 * followed the last reading at the sampled sleeps (a moving average). The wait's timeout is
 * reckoned from that start too: a timer can run late by the error of the estimate, which is at most
 * the work of one round.
 *
 * <p>Allocation-free per wake-up and per spin; a task handed over from another thread costs a queue
 * node, one the loop hands to itself does not.
 *
 * <p>Longer than most types: fds, tasks, timers and the busy poll share one round of the loop, and
 * the hot path (wait, dispatch, spin) stays in one class so that no call or indirection sits between
 * its steps.
 */
public final class RpmaEventLoop implements Executor {

    private static final Logger logger = LoggerFactory.getLogger(RpmaEventLoop.class);

    /** Readable fds taken per {@code epoll_wait}; more are reported by the next wait, at once. */
    static final int EVENTS_PER_WAIT = 64;

    /** Spinning without work this long, at most, between two looks at the fds. */
    static final long FD_LOOK_INTERVAL_MICROS = 1000;

    /**
     * Spins, or looks of a loop without a busy poll, that found work between two looks at the fds, at
     * most (the clock is not read on them).
     */
    static final int WORKING_SPINS_PER_FD_LOOK = 256;

    /** Looks in a row that found nothing, after which a loop without a busy poll waits again. */
    static final int EMPTY_LOOKS_BEFORE_SLEEPING = 4;

    /** Sleeps per sleep whose start is read from the clock (the others' is estimated). */
    static final int SLEEP_START_SAMPLE = 16;

    private static final VarHandle IDLE_NANOS;

    private static final VarHandle WAKEUPS;

    private static final VarHandle POLLER_COUNT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            IDLE_NANOS = lookup.findVarHandle(RpmaEventLoop.class, "idleNanos", long.class);
            WAKEUPS = lookup.findVarHandle(RpmaEventLoop.class, "wakeups", long.class);
            POLLER_COUNT = lookup.findVarHandle(RpmaEventLoop.class, "pollerCount", int.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Called on the loop thread when a registered fd is readable (level-triggered: until it is drained). */
    @FunctionalInterface
    public interface IoHandler {

        /** @param kind what the handler registered the fd as (0 to 255) */
        void onReadable(int kind);
    }

    /** Looked at in the busy poll; called on the loop thread. */
    @FunctionalInterface
    public interface BusyPoller {

        /** One look, without a system call where possible; {@code true} when it found work. */
        boolean pollOnce();
    }

    private enum State {
        NEW, RUNNING, STOPPING, STOPPED
    }

    private final String name;

    private final long busyPollNanos;

    private final Epoll epoll = new Epoll(EVENTS_PER_WAIT);

    private final Thread thread;

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

    /** A wake-up was written and the loop has not returned from its wait since: later ones need no syscall. */
    private final AtomicBoolean wakeupPending = new AtomicBoolean();

    private final CountDownLatch terminated = new CountDownLatch(1);

    private final long startedNanos = System.nanoTime();

    private volatile State state = State.NEW;

    // owned by the loop thread
    private @Nullable IoHandler[] handlers = new IoHandler[16];

    private int[] freeSlots = new int[16];

    /** By slot: whether the fd is left to the pollers while the loop spins. */
    private boolean[] busyPolled = new boolean[16];

    private int freeCount;

    private int nextSlot;

    private BusyPoller[] pollers = new BusyPoller[8];

    private int pollerCount;

    /** Tasks the loop handed to itself while no other thread's waited ({@link #executeInLoop}); run first. */
    private final ArrayDeque<Runnable> ownTasks = new ArrayDeque<>();

    private final ArrayDeque<Runnable> soon = new ArrayDeque<>();

    private final PriorityQueue<Timer> timers = new PriorityQueue<>();

    private long timerSequence;

    /** {@link System#nanoTime()} as the loop last read it. */
    private long clock = this.startedNanos;

    /** Sleeps until the next whose start is read. */
    private int sleepsUntilSample = 1;

    /** Time from the last clock reading to a sleep, a moving average of the sampled sleeps. */
    private long workBeforeSleepNanos;

    @SuppressWarnings("unused") // through IDLE_NANOS: written by the loop, read by meters
    private volatile long idleNanos;

    @SuppressWarnings("unused") // through WAKEUPS
    private volatile long wakeups;

    /**
     * @param name the thread's name
     * @param busyPoll how long to keep polling the busy pollers after work before sleeping; zero sleeps
     *     after a few looks at them in a row found nothing
     */
    public RpmaEventLoop(String name, Duration busyPoll) {
        this.name = name;
        this.busyPollNanos = busyPoll.toNanos();
        this.thread = new LoopThread(this, name);
        // daemon: the server keeps the JVM alive with a thread of its own while it runs, so that a loop
        // stuck in application code cannot keep a JVM from exiting after the server gave up on it
        this.thread.setDaemon(true);
    }

    public String name() {
        return this.name;
    }

    /** Starts the loop thread; once. */
    public synchronized void start() {
        if (this.state != State.NEW) {
            throw new IllegalStateException("Event loop '" + this.name + "' was already started");
        }
        this.state = State.RUNNING;
        this.thread.start();
    }

    /** The loop whose thread calls this; {@code null} on any other thread. */
    public static @Nullable RpmaEventLoop current() {
        return (Thread.currentThread() instanceof LoopThread loopThread) ? loopThread.loop : null;
    }

    /** Whether the calling thread is this loop's. */
    public boolean inLoop() {
        return Thread.currentThread() == this.thread;
    }

    /** The loop's thread, for ownership checks and hand-offs (e.g. of a librpma endpoint). */
    public Thread thread() {
        return this.thread;
    }

    /**
     * Runs {@code task} on the loop thread, after the tasks handed over before it. Any thread.
     *
     * @throws RejectedExecutionException once the loop has stopped
     */
    @Override
    public void execute(Runnable task) {
        if (Thread.currentThread() == this.thread) {
            executeInLoop(task);
            return;
        }
        State current = this.state;
        if (current == State.STOPPED || current == State.STOPPING) {
            throw new RejectedExecutionException("Event loop '" + this.name + "' has stopped");
        }
        this.tasks.add(task);
        if (this.state == State.STOPPED && this.tasks.remove(task)) {
            // the loop ended between the check and the add: the task would never be run
            throw new RejectedExecutionException("Event loop '" + this.name + "' has stopped");
        }
        wakeup();
    }

    /**
     * A task the loop hands to itself (a request made in a reply's callback) goes to a queue of the
     * loop's own, without the shared queue's node and atomic operations, unless tasks of other
     * threads wait: behind them, so that the tasks still run in the order they were handed over.
     */
    private void executeInLoop(Runnable task) {
        if (this.state == State.STOPPED) {
            throw new RejectedExecutionException("Event loop '" + this.name + "' has stopped");
        }
        if (this.tasks.isEmpty()) {
            this.ownTasks.add(task);
        }
        else {
            this.tasks.add(task);
        }
    }

    /** Like {@link #execute}, but {@code false} instead of an exception once the loop has stopped. */
    public boolean tryExecute(Runnable task) {
        try {
            execute(task);
            return true;
        }
        catch (RejectedExecutionException ex) {
            return false;
        }
    }

    /** Makes the current or next wait return at once. Any thread. */
    public void wakeup() {
        // read first: while a wake-up is pending, the threads that hand over work only share the flag's line
        if (!this.wakeupPending.get() && !this.wakeupPending.getAndSet(true)) {
            this.epoll.wakeup();
        }
    }

    /**
     * Watches {@code fd}: {@code handler.onReadable(kind)} is called on this thread while it is
     * readable. Loop thread only.
     *
     * @return the registration, for {@link #unregister}
     */
    public long register(int fd, IoHandler handler, int kind) {
        return register(fd, handler, kind, false);
    }

    /**
     * Like {@link #register}, for an fd whose work a busy poller also finds (a completion channel):
     * the loop does not look at it while it spins, only when it sleeps. Loop thread only.
     */
    public long registerBusyPolled(int fd, IoHandler handler, int kind) {
        return register(fd, handler, kind, true);
    }

    private long register(int fd, IoHandler handler, int kind, boolean polled) {
        checkInLoop("register");
        if (kind < 0 || kind > 255) {
            throw new IllegalArgumentException("kind must be 0 to 255, got " + kind);
        }
        int slot = (this.freeCount > 0) ? this.freeSlots[--this.freeCount] : this.nextSlot++;
        if (slot >= this.handlers.length) {
            this.handlers = java.util.Arrays.copyOf(this.handlers, this.handlers.length * 2);
            this.busyPolled = java.util.Arrays.copyOf(this.busyPolled, this.handlers.length);
        }
        long token = ((long) slot << 8) | kind;
        this.epoll.add(fd, token);
        this.handlers[slot] = handler;
        this.busyPolled[slot] = polled;
        return token;
    }

    /**
     * Stops watching {@code fd}; call it before the fd is closed (librpma closes a connection's fds
     * when it deletes the connection). Loop thread only.
     */
    public void unregister(int fd, long registration) {
        checkInLoop("unregister");
        int slot = (int) (registration >>> 8);
        this.handlers[slot] = null;
        this.busyPolled[slot] = false;
        if (this.freeCount == this.freeSlots.length) {
            this.freeSlots = java.util.Arrays.copyOf(this.freeSlots, this.freeSlots.length * 2);
        }
        this.freeSlots[this.freeCount++] = slot;
        this.epoll.remove(fd);
    }

    /**
     * Whether registered {@code fd} is readable right now (one {@code poll(2)}, no wait): for a handler
     * that takes several items per readiness from an fd that must not be read once it is empty.
     * Loop thread only.
     */
    public boolean isReadableNow(int fd) {
        checkInLoop("isReadableNow");
        return this.epoll.isReadableNow(fd);
    }

    /** Adds a poller to the busy poll. Loop thread only. */
    public void addBusyPoller(BusyPoller poller) {
        checkInLoop("addBusyPoller");
        if (this.pollerCount == this.pollers.length) {
            this.pollers = java.util.Arrays.copyOf(this.pollers, this.pollers.length * 2);
        }
        this.pollers[this.pollerCount++] = poller;
    }

    /**
     * How many pollers the busy poll has; for tests, from any thread: an opaque read, so that a test
     * that waits for a change sees it (a plain read could be hoisted out of its waiting loop).
     */
    public int busyPollers() {
        return (int) POLLER_COUNT.getOpaque(this);
    }

    /** Removes a poller from the busy poll. Loop thread only. */
    public void removeBusyPoller(BusyPoller poller) {
        checkInLoop("removeBusyPoller");
        for (int i = 0; i < this.pollerCount; i++) {
            if (this.pollers[i] == poller) {
                // the order of the pollers does not matter: the last one takes the removed one's place
                this.pollers[i] = this.pollers[--this.pollerCount];
                this.pollers[this.pollerCount] = null;
                return;
            }
        }
    }

    /**
     * Runs {@code work} in this loop's next round, before it waits: for work left over when a
     * handler stopped at its budget, since a drained fd reports nothing new. Loop thread only.
     */
    public void runSoon(Runnable work) {
        checkInLoop("runSoon");
        this.soon.add(work);
    }

    /**
     * {@link System#nanoTime()} as this loop last read it: when its current round began, or later in
     * its busy poll or its looks; behind the clock by at most the work of one round, or of
     * {@value #WORKING_SPINS_PER_FD_LOOK} spins or looks that found work. Free where a read of the clock may be
     * a system call: for times that tolerate the lag, as activity stamps and deadlines that a timer
     * looks at again. Loop thread only.
     */
    public long clockNanos() {
        checkInLoop("clockNanos");
        return this.clock;
    }

    /**
     * Runs {@code task} on this thread after {@code delay} (from now, not from {@link #clockNanos()}).
     * Loop thread only.
     */
    public Timer schedule(Runnable task, Duration delay) {
        checkInLoop("schedule");
        Timer timer = new Timer(task, System.nanoTime() + delay.toNanos(), this.timerSequence++);
        this.timers.add(timer);
        return timer;
    }

    /**
     * Time the loop spent waiting for events since it was created; the rest it ran or spun. Most
     * waits' starts are estimated (see the class comment): the split is exact on average, not per wait.
     */
    public long idleNanos() {
        return (long) IDLE_NANOS.getOpaque(this);
    }

    /** Time since the loop was created. */
    public long aliveNanos() {
        return System.nanoTime() - this.startedNanos;
    }

    /** How many times the loop returned from a wait. */
    public long wakeups() {
        return (long) WAKEUPS.getOpaque(this);
    }

    /**
     * Stops the loop after the tasks already handed over: it stops watching nothing itself, so
     * whoever registered fds must have unregistered (and released) them first.
     */
    public void shutdown() {
        synchronized (this) {
            if (this.state == State.NEW) {
                this.state = State.STOPPED;
                this.epoll.close();
                this.terminated.countDown();
                return;
            }
            if (this.state != State.RUNNING) {
                return;
            }
            this.state = State.STOPPING;
        }
        wakeup();
    }

    /** Waits until the loop thread ended; {@code false} on timeout. */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return this.terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    public boolean isTerminated() {
        return this.terminated.getCount() == 0;
    }

    private void run() {
        try {
            while (this.state == State.RUNNING) {
                round();
            }
            // what was handed over before the stop still runs (it may release native objects)
            runTasks();
            runSoonWork();
        }
        catch (Throwable ex) {
            // written here, trace and all: the loop serves nothing any more, and a trace handed over
            // could be lost if the process exits because of what broke the loop
            logger.error("Event loop '{}' failed and stops; what it owns is left as it is", this.name, ex);
        }
        finally {
            this.state = State.STOPPED;
            // a task handed over while the loop ended is either run here or refused by execute()
            runTasks();
            this.epoll.close();
            this.terminated.countDown();
        }
    }

    private void round() {
        int ready;
        if (!workWaiting()) {
            // the sleep's start serves the wait's timeout and the idle time
            long before = sleepStart();
            ready = this.epoll.await(waitTimeout(before));
            this.clock = System.nanoTime();
            IDLE_NANOS.setOpaque(this, (long) IDLE_NANOS.getOpaque(this) + Math.max(0, this.clock - before));
        }
        else {
            ready = this.epoll.await(0);
            this.clock = System.nanoTime();
        }
        WAKEUPS.setOpaque(this, (long) WAKEUPS.getOpaque(this) + 1);
        // before the tasks run: a task added from here on either runs below or wakes the next wait
        this.wakeupPending.set(false);
        dispatch(ready, false);
        boolean worked = ready > 0;
        worked |= runTasks();
        worked |= runSoonWork();
        if (!this.timers.isEmpty()) {
            runTimers();
        }
        if (worked && this.pollerCount > 0) {
            if (this.busyPollNanos > 0) {
                spin();
            }
            else {
                lookBeforeSleeping();
            }
        }
    }

    /**
     * Without a busy poll: looks at the pollers until {@value #EMPTY_LOOKS_BEFORE_SLEEPING} looks in a
     * row find nothing, running what the work hands over, as a C loop polls its completion queue
     * before it waits: what completed while the loop worked (a reply that came during a send's system
     * call) is taken without a wait, an event read and a re-arm first. A few looks, not one: the reply
     * often comes just after a send's own completion, and a look costs no system call. The looks go
     * on while they find work, the fds and timers looked at every {@value #WORKING_SPINS_PER_FD_LOOK}
     * of them: a loop that went through a round instead would pay, every few messages of a client
     * keeping one in flight, a wait that returns at once for the event the work raised, a clock read,
     * and the channel's event read and re-arm (docs/performance.md, "Where the client's time goes").
     */
    private void lookBeforeSleeping() {
        int empty = 0;
        int working = 0;
        while (this.state == State.RUNNING) {
            boolean found = pollAll();
            found |= runTasks();
            if (!this.soon.isEmpty()) {
                return;
            }
            if (!found) {
                if (++empty == EMPTY_LOOKS_BEFORE_SLEEPING) {
                    return;
                }
                continue;
            }
            empty = 0;
            working = countWorkingLook(working);
        }
    }

    /**
     * Counts a look or spin that found work, of {@code working} so far; the
     * {@value #WORKING_SPINS_PER_FD_LOOK}th looks at the fds and timers and starts the count again.
     */
    private int countWorkingLook(int working) {
        if (working + 1 < WORKING_SPINS_PER_FD_LOOK) {
            return working + 1;
        }
        this.clock = System.nanoTime();
        lookAtFds();
        return 0;
    }

    /** Tasks (of the loop's own or of other threads) or work to run soon wait. */
    private boolean workWaiting() {
        return !this.ownTasks.isEmpty() || !this.tasks.isEmpty() || !this.soon.isEmpty();
    }

    /**
     * When the sleep about to begin begins: read from the clock before one sleep in
     * {@value #SLEEP_START_SAMPLE}, estimated from those readings before the others.
     */
    private long sleepStart() {
        long last = this.clock;
        if (--this.sleepsUntilSample > 0) {
            return last + this.workBeforeSleepNanos;
        }
        this.sleepsUntilSample = SLEEP_START_SAMPLE;
        long now = System.nanoTime();
        this.workBeforeSleepNanos += ((now - last) - this.workBeforeSleepNanos) / 4;
        return now;
    }

    private int waitTimeout(long now) {
        Timer next = this.timers.peek();
        if (next == null) {
            return -1;
        }
        long nanos = next.deadline - now;
        return (nanos <= 0) ? 0 : (int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(nanos + 999_999));
    }

    /**
     * Calls the handlers of the ready fds, while spinning not those the pollers cover; whether one
     * was called.
     */
    private boolean dispatch(int ready, boolean spinning) {
        boolean any = false;
        for (int i = 0; i < ready; i++) {
            long token = this.epoll.token(i);
            int slot = (int) (token >>> 8);
            IoHandler handler = this.handlers[slot];
            if (handler != null && !(spinning && this.busyPolled[slot])) {
                any = true;
                handler.onReadable((int) token & 0xFF);
            }
        }
        return any;
    }

    private boolean runTasks() {
        boolean ran = false;
        Runnable task;
        while ((task = this.ownTasks.poll()) != null || (task = this.tasks.poll()) != null) {
            ran = true;
            runSafely(task);
        }
        return ran;
    }

    private boolean runSoonWork() {
        int count = this.soon.size();
        for (int i = 0; i < count; i++) {
            // what these add runs in the next round
            runSafely(this.soon.poll());
        }
        return count > 0;
    }

    private void runTimers() {
        long now = this.clock;
        Timer timer;
        while ((timer = this.timers.peek()) != null && now - timer.deadline >= 0) {
            this.timers.poll();
            if (!timer.cancelled) {
                runSafely(timer.task);
            }
        }
    }

    /**
     * Busy-polls until a whole busy-poll time passed without work, tasks arrived, or the loop stops;
     * looks at the fds (and the timers) after {@value #FD_LOOK_INTERVAL_MICROS} µs of spinning or
     * {@value #WORKING_SPINS_PER_FD_LOOK} spins that found work.
     */
    private void spin() {
        long deadline = 0;
        long fdLookAt = 0;
        int workingSpins = 0;
        while (this.state == State.RUNNING) {
            boolean found = pollAll();
            if (workWaiting() || this.pollerCount == 0) {
                return;
            }
            if (found) {
                workingSpins = countWorkingLook(workingSpins);
                // work came: the busy-poll time starts again, read from the clock at the next empty look
                deadline = 0;
                continue;
            }
            long now = System.nanoTime();
            this.clock = now;
            if (fdLookAt == 0) {
                fdLookAt = now + FD_LOOK_INTERVAL_MICROS * 1000;
            }
            else if (now - fdLookAt >= 0) {
                fdLookAt = now + FD_LOOK_INTERVAL_MICROS * 1000;
                workingSpins = 0;
                if (lookAtFds()) {
                    deadline = 0;
                    continue;
                }
            }
            if (deadline == 0) {
                deadline = now + this.busyPollNanos;
            }
            else if (now - deadline >= 0) {
                return;
            }
            // lets another runnable thread on this CPU (a client, the provider's threads) go on
            Thread.yield();
        }
    }

    /**
     * One look at every poller; whether one found work. The array and the count are read at each step:
     * a poller may remove itself or another (its session ended) or add one during its look, and the
     * array is replaced when it grows.
     */
    private boolean pollAll() {
        boolean found = false;
        for (int i = 0; i < this.pollerCount; i++) {
            found |= this.pollers[i].pollOnce();
        }
        return found;
    }

    /**
     * One look at the fds the pollers do not cover, and the due timers (by {@link #clock}, which the
     * caller has just read), while spinning; whether there was work.
     */
    private boolean lookAtFds() {
        int ready = this.epoll.await(0);
        // the look consumed any wake-up: a later one must write again, or the next sleep never ends
        this.wakeupPending.set(false);
        boolean found = dispatch(ready, true);
        if (!this.timers.isEmpty()) {
            runTimers();
        }
        return found;
    }

    private void runSafely(Runnable task) {
        try {
            task.run();
        }
        catch (RuntimeException ex) {
            // one failing task must not take the loop and everything it owns down with it
            RpmaLogThread.error(logger, "A task on event loop '" + this.name + "' failed: " + ex, ex);
        }
    }

    private void checkInLoop(String method) {
        if (!inLoop()) {
            throw new IllegalStateException("RpmaEventLoop." + method + "() must be called on the loop's thread '"
                    + this.name + "', not on '" + Thread.currentThread().getName() + "': hand it over with execute()");
        }
    }

    @Override
    public String toString() {
        return "RpmaEventLoop[" + this.name + ", " + this.state + "]";
    }

    /** A loop's thread, which knows its loop ({@link #current()}). */
    private static final class LoopThread extends RpmaThread {

        private final RpmaEventLoop loop;

        LoopThread(RpmaEventLoop loop, String name) {
            super(loop::run, name);
            this.loop = loop;
        }
    }

    /** A task due at a time; cancel it on the loop thread. */
    public static final class Timer implements Comparable<Timer> {

        private final Runnable task;

        private final long deadline;

        private final long sequence;

        private boolean cancelled;

        private Timer(Runnable task, long deadline, long sequence) {
            this.task = task;
            this.deadline = deadline;
            this.sequence = sequence;
        }

        /** Keeps the task from running; loop thread only. */
        public void cancel() {
            this.cancelled = true;
        }

        @Override
        public int compareTo(Timer other) {
            int byTime = Long.compare(this.deadline - other.deadline, 0);
            return (byTime != 0) ? byTime : Long.compare(this.sequence, other.sequence);
        }
    }
}
