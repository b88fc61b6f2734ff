package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import ch.qos.logback.classic.Level;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.RpmaFailureKind;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.io.MemoryLockLimit;
import dev.rpma.binding.testing.FakeCall;
import dev.rpma.binding.testing.FakeRequest;

/**
 * The memory-lock limit against what the configuration registers, with the limit scripted through
 * {@code Rpma.using(fake, limit)}: too small a limit fails the listen before anything native is made,
 * a limit that fits the start but not the connection limits is a warning, the estimate is exactly what
 * the fake sees registered, and an ENOMEM of a registration, at listen or later, is named as the limit.
 */
class MemoryLockTest {

    private static final long KIB = 1024;

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void aRegionLargerThanTheLimitFailsTheListenBeforeAnyLibrpmaCall() {
        this.harness.memoryLockLimit = MemoryLockLimit.of(64 * KIB);
        this.harness.regions.add(RpmaRegionDefinition.readOnly("catalog", NativeMemory.allocate(1024 * 1024)));
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .isInstanceOfSatisfying(RpmaMemoryLockException.class, (ex) -> {
                assertThat(ex.neededBytes()).as("1 MiB spans 257 pages").isEqualTo(257 * 4096);
                assertThat(ex.limit().softBytes()).isEqualTo(64 * KIB);
                assertThat(ex.needs()).containsExactly("region 'catalog' on the peer of 198.18.0.1 1.0 MiB");
                assertThat(ex.rpmaCause()).isNull();
                assertThat(ex.getMessage()).startsWith("The RDMA server registers 1.0 MiB when it starts (region"
                        + " 'catalog' on the peer of 198.18.0.1 1.0 MiB), and this process may lock 64 KiB"
                        + " (RLIMIT_MEMLOCK). Raise the memory-lock limit")
                    .contains(RpmaFailureKind.MEMORY_LOCK_ADVICE);
            });
        assertThat(this.harness.fake.callLog()).as("no librpma call").isEmpty();
        this.harness.server = null;
    }

    @Test
    void theCapabilityLiftsTheLimit() {
        this.harness.memoryLockLimit = new MemoryLockLimit(0, 0, true, 4096);
        this.harness.regions.add(RpmaRegionDefinition.readOnly("catalog", NativeMemory.allocate(1024 * 1024)));
        this.harness.listen(RpmaIncomingRequest::connect);
        assertThat(this.harness.fake.calls("rpma_mr_reg")).isOne();
    }

    /**
     * The estimate is what listen and the first session register, page by page: regions once per peer,
     * the shared receive queue of each loop, the first chunk of slots.
     */
    @Test
    void theEstimateIsExactlyWhatListenAndTheFirstSessionRegister() {
        this.harness.eventLoops = 2;
        this.harness.messages = this.harness.messages.withSharedReceiveSlots(32);
        this.harness.messageHandlers.put("", (message, session) -> message);
        this.harness.regions.add(RpmaRegionDefinition.readOnly("catalog", NativeMemory.allocate(10_000)));
        MemoryLockLimit limit = MemoryLockLimit.of(Long.MAX_VALUE - 1);
        MemoryLockBudget budget = MemoryLockBudget.of(new RpmaServerSettings(2, java.time.Duration.ZERO,
                java.time.Duration.ZERO, RpmaServerSettings.DEFAULT_SHUTDOWN_TIMEOUT, List.of(this.harness.settings()),
                this.harness.regions), (name) -> true, limit);
        this.harness.memoryLockLimit = limit;
        this.harness.startRaw((message, session) -> message);
        this.harness.connectOne();
        long registered = this.harness.fake.callLog("rpma_mr_reg").stream()
            .mapToLong((FakeCall call) -> limit.pinnedBytes(call.args()[2]))
            .sum();
        assertThat(budget.startBytes()).isEqualTo(registered);
        assertThat(budget.atStart()).extracting(MemoryLockBudget.Need::what)
            .containsExactly("region 'catalog' on the peer of 198.18.0.1", "the shared receive queues of endpoint"
                    + " 'default' (2)", "the first slots of endpoint 'default' (16 sessions)");
    }

    @Test
    void aLimitBelowTheFirstSessionsSlotsFailsTheListen() {
        this.harness.messageHandlers.put("", (message, session) -> message);
        // raw, 64-byte messages: a chunk is 16 sessions of 8 receive and 8 send slots of 64 bytes, two registrations
        long chunk = 2 * MemoryLockLimit.of(0).pinnedBytes(16 * 8 * 64);
        this.harness.memoryLockLimit = MemoryLockLimit.of(chunk - 1);
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .isInstanceOfSatisfying(RpmaMemoryLockException.class, (ex) -> assertThat(ex.needs())
                .containsExactly("the first slots of endpoint 'default' (16 sessions) 24 KiB"));
        this.harness.server = null;
        this.harness.memoryLockLimit = MemoryLockLimit.of(chunk);
        this.harness.startRaw((message, session) -> message);
        this.harness.connectOne();
    }

    @Test
    void aLimitThatFitsTheStartButNotTheConnectionLimitIsAWarning() {
        this.harness.messageHandlers.put("", (message, session) -> message);
        this.harness.limits = new RpmaEndpointSettings.Limits(64, java.time.Duration.ZERO);
        long chunk = 2 * MemoryLockLimit.of(0).pinnedBytes(16 * 8 * 64);
        this.harness.memoryLockLimit = MemoryLockLimit.of(2 * chunk);
        try (CapturedLog log = new CapturedLog()) {
            this.harness.listen(RpmaIncomingRequest::connect);
            assertThat(log.messages(Level.WARN)).singleElement().asString()
                .startsWith("RDMA server: at its connection limits its registered memory pins 96 KiB ([the slots of"
                        + " endpoint 'default' at 64 connections 72 KiB]), more than the 48 KiB this process may lock")
                .contains("rejected as 'capacity'", "ulimit -l", "lower limits.max-connections");
        }
    }

    /** The limit read as enough, yet the registration failed: the same advice, with what the server needs. */
    @Test
    void anEnomemOfARegistrationAtListenIsTheLimitWithWhatTheServerNeeds() {
        this.harness.regions.add(RpmaRegionDefinition.readOnly("catalog", NativeMemory.allocate(4096)));
        this.harness.fake.failNext("rpma_mr_reg", RpmaError.PROVIDER.code(), Errno.ENOMEM);
        assertThatThrownBy(() -> this.harness.listen(RpmaIncomingRequest::connect))
            .isInstanceOfSatisfying(RpmaMemoryLockException.class, (ex) -> {
                assertThat(ex.rpmaCause()).isNotNull();
                assertThat(ex.rpmaCause().errno()).isEqualTo(Errno.ENOMEM);
                assertThat(ex.getMessage()).startsWith("Registering memory failed as the RDMA server started"
                        + " (rpma_mr_reg() failed with RPMA_E_PROVIDER (-100002): Provider error occurred; errno 12"
                        + " (ENOMEM)): it registers 8 KiB when it starts");
            });
        this.harness.fake.assertAllFreed();
        this.harness.server = null;
    }

    /** At run time the session's slots cannot be registered: the request is rejected, the log line says why. */
    @Test
    void anEnomemOfTheSessionsSlotsRejectsTheRequestWithTheAdvice() {
        this.harness.messageHandlers.put("", (message, session) -> message);
        try (CapturedLog log = new CapturedLog()) {
            this.harness.start(RpmaIncomingRequest::connect);
            this.harness.fake.failNext("rpma_mr_reg", RpmaError.PROVIDER.code(), Errno.ENOMEM);
            FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });
            this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
            assertThat(this.harness.statistics().rejected(RejectReason.CAPACITY)).isOne();
            assertThat(log.messages(Level.WARN)).anySatisfy((line) -> assertThat(line)
                .contains("has no memory for another session's slots", "errno 12 (ENOMEM)", "RLIMIT_MEMLOCK",
                        "'ulimit -l unlimited'"));
        }
    }
}
