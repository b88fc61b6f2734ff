package dev.rpma.binding.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What the memory-lock limit allows, how pinning is counted, and how the capability is read. */
class MemoryLockLimitTest {

    private static final String ROOT_IN_A_DEFAULT_CONTAINER = """
            Name:\tjava
            CapInh:\t0000000000000000
            CapPrm:\t00000000a80425fb
            CapEff:\t00000000a80425fb
            CapBnd:\t00000000a80425fb
            """;

    @Test
    void theEffectiveSetSaysWhetherTheLimitApplies() {
        assertThat(MemoryLockLimit.holdsIpcLock(ROOT_IN_A_DEFAULT_CONTAINER)).as("docker's default set lacks it")
            .isFalse();
        assertThat(MemoryLockLimit.holdsIpcLock("CapPrm:\t0000000000004000\nCapEff:\t0000000000004000\n")).isTrue();
        assertThat(MemoryLockLimit.holdsIpcLock("CapPrm:\t0000000000004000\nCapEff:\t0000000000000000\n"))
            .as("permitted but not effective").isFalse();
        assertThat(MemoryLockLimit.holdsIpcLock("CapEff:\t000001fffeffffff\n")).as("a full root set").isTrue();
        assertThat(MemoryLockLimit.holdsIpcLock("CapEff:\t000001fffeffbfff\n")).as("all but CAP_IPC_LOCK").isFalse();
        assertThat(MemoryLockLimit.holdsIpcLock("CapEff:\tnonsense\n")).isFalse();
        assertThat(MemoryLockLimit.holdsIpcLock("Name:\tjava\n")).isFalse();
        assertThat(MemoryLockLimit.holdsIpcLock(null)).isFalse();
    }

    @Test
    void aLimitAllowsUpToItselfAndTheCapabilityOrInfinityLiftIt() {
        MemoryLockLimit limit = MemoryLockLimit.of(65536);
        assertThat(limit.allows(65536)).isTrue();
        assertThat(limit.allows(65537)).isFalse();
        assertThat(limit.isUnlimited()).isFalse();
        MemoryLockLimit capable = new MemoryLockLimit(65536, 65536, true, 4096);
        assertThat(capable.allows(Long.MAX_VALUE)).isTrue();
        assertThat(capable.describe()).isEqualTo("unlimited (the process holds CAP_IPC_LOCK)");
        assertThat(MemoryLockLimit.NONE.allows(Long.MAX_VALUE)).isTrue();
        assertThat(MemoryLockLimit.NONE.describe()).isEqualTo("unlimited");
        assertThat(limit.describe()).isEqualTo("64 KiB");
    }

    /** A direct buffer starts anywhere in a page, so it spans one page more than its size rounded up. */
    @Test
    void pinningCountsWholePagesPlusOneForAnUnalignedStart() {
        MemoryLockLimit limit = MemoryLockLimit.of(65536);
        assertThat(limit.pinnedBytes(0)).isZero();
        assertThat(limit.pinnedBytes(1)).isEqualTo(2 * 4096);
        assertThat(limit.pinnedBytes(4096)).isEqualTo(2 * 4096);
        assertThat(limit.pinnedBytes(4097)).isEqualTo(3 * 4096);
        assertThat(new MemoryLockLimit(1 << 30, 1 << 30, false, 65536).pinnedBytes(1)).as("64 KiB pages")
            .isEqualTo(2 * 65536);
    }

    @Test
    void sizesReadAsAPersonWritesThem() {
        assertThat(MemoryLockLimit.size(512)).isEqualTo("512 bytes");
        assertThat(MemoryLockLimit.size(65536)).isEqualTo("64 KiB");
        assertThat(MemoryLockLimit.size(1536 * 1024)).isEqualTo("1.5 MiB");
        assertThat(MemoryLockLimit.size(8L << 30)).isEqualTo("8 GiB");
        assertThat(MemoryLockLimit.size(MemoryLockLimit.UNLIMITED)).isEqualTo("unlimited");
    }

    @Test
    void negativeValuesAreRefused() {
        assertThatThrownBy(() -> new MemoryLockLimit(-1, 0, false, 4096)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MemoryLockLimit(0, 0, false, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
