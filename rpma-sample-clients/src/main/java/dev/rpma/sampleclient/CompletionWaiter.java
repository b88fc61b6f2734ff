package dev.rpma.sampleclient;

import java.time.Duration;
import java.util.function.Consumer;

import dev.rpma.binding.RpmaCompletion;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.io.FdPoller;

/**
 * Waits, with a timeout, for the completions of one connection, on its completion queue and on its
 * receive completion queue when it has one.
 *
 * <p>librpma's {@code rpma_cq_wait} blocks without a timeout, so this polls the queues' completion
 * channel fds first and calls it only when an event is there. Every wait is followed by draining
 * the queue, because a completion that arrives before the queue is re-armed raises no event of its
 * own. Not thread-safe: one waiter per polling thread.
 */
public final class CompletionWaiter implements AutoCloseable {

    private final RpmaCompletionQueue[] queues;

    private final int[] fds;

    private final FdPoller poller;

    private final RpmaCompletions batch = new RpmaCompletions(8);

    public CompletionWaiter(RpmaConnection connection) {
        RpmaCompletionQueue rcq = connection.receiveCompletionQueue();
        this.queues = (rcq != null)
                ? new RpmaCompletionQueue[] { connection.completionQueue(), rcq }
                : new RpmaCompletionQueue[] { connection.completionQueue() };
        this.fds = new int[this.queues.length];
        for (int i = 0; i < this.queues.length; i++) {
            this.fds[i] = this.queues[i].fd();
        }
        this.poller = new FdPoller(this.queues.length);
    }

    /**
     * Hands every completion that is there, or arrives within {@code timeout}, to {@code consumer}.
     *
     * @return how many completions were handed over; 0 when the timeout passed without any
     */
    public int await(Duration timeout, Consumer<RpmaCompletion> consumer) {
        int handed = drainAll(consumer);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (handed == 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return 0;
            }
            int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, left / 1_000_000));
            if (this.poller.await(this.fds, this.fds.length, millis) == 0) {
                continue;
            }
            for (int i = 0; i < this.queues.length; i++) {
                if (this.poller.isReadable(i)) {
                    // consumes the channel's event and re-arms the queue; it does not block here
                    this.queues[i].await();
                }
            }
            handed = drainAll(consumer);
        }
        return handed;
    }

    private int drainAll(Consumer<RpmaCompletion> consumer) {
        int handed = 0;
        for (RpmaCompletionQueue queue : this.queues) {
            int got;
            while ((got = queue.poll(this.batch)) > 0) {
                for (int i = 0; i < got; i++) {
                    consumer.accept(this.batch.get(i));
                }
                handed += got;
            }
        }
        return handed;
    }

    @Override
    public void close() {
        this.poller.close();
    }
}
