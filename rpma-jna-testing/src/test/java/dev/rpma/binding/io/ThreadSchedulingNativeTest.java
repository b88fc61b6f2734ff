package dev.rpma.binding.io;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.rpma.binding.testing.SchedulingPolicies;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ThreadScheduling} against the real libc and kernel. */
class ThreadSchedulingNativeTest {

    @Test
    void putsOnlyTheCallingThreadUnderTheBatchPolicy() throws InterruptedException {
        AtomicInteger errno = new AtomicInteger(-1);
        AtomicInteger policy = new AtomicInteger(-1);
        Thread thread = new Thread(() -> {
            errno.set(ThreadScheduling.batchCurrentThread());
            policy.set(SchedulingPolicies.ofCurrentThread());
        });
        thread.start();
        thread.join();

        assertThat(errno).hasValue(0);
        assertThat(policy).hasValue(SchedulingPolicies.SCHED_BATCH);
        assertThat(SchedulingPolicies.ofCurrentThread()).isEqualTo(SchedulingPolicies.SCHED_OTHER);
    }
}
