package dev.rpma.binding;

import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RpmaThread}: its calls find their scratch memory in the thread, other threads in a ThreadLocal. */
class RpmaThreadTest {

    @Test
    void anRpmaThreadCarriesItsOwnScratchMemory() throws InterruptedException {
        AtomicReference<Scratch> first = new AtomicReference<>();
        AtomicReference<Scratch> again = new AtomicReference<>();
        RpmaThread thread = new RpmaThread(() -> {
            first.set(Scratch.get());
            again.set(Scratch.get());
        }, "rpma-test");
        thread.start();
        thread.join();

        assertThat(first.get()).isNotNull().isSameAs(again.get()).isSameAs(thread.scratch());
        assertThat(Scratch.get()).as("a plain thread's, from the ThreadLocal").isNotSameAs(first.get())
            .isSameAs(Scratch.get());
    }

    @Test
    void twoRpmaThreadsHaveTwoScratchMemories() throws InterruptedException {
        AtomicReference<Scratch> one = new AtomicReference<>();
        AtomicReference<Scratch> other = new AtomicReference<>();
        RpmaThread first = new RpmaThread(() -> one.set(Scratch.get()), "rpma-test-1");
        RpmaThread second = new RpmaThread(() -> other.set(Scratch.get()), "rpma-test-2");
        first.start();
        second.start();
        first.join();
        second.join();

        assertThat(one.get()).isNotNull().isNotSameAs(other.get());
    }
}
