package dev.rpma.server.loop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** For tests: work run on an event loop's thread, waited for. */
public final class LoopTasks {

    private LoopTasks() {
    }

    /**
     * Runs {@code task} on {@code loop} and waits at most 10 s until it ran, which also shows that the
     * loop still runs tasks.
     *
     * @throws java.util.concurrent.ExecutionException with what the task threw
     */
    public static void runOn(RpmaEventLoop loop, Runnable task) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                task.run();
                done.complete(null);
            }
            catch (Throwable ex) {
                done.completeExceptionally(ex);
            }
        });
        done.get(10, TimeUnit.SECONDS);
    }
}
