package dev.rpma.benchmarks.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.rpma.benchmarks.client.BarePingPongClient.Options;
import dev.rpma.benchmarks.client.LoadRuns.Result;
import dev.rpma.binding.testing.FakeLibRpma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The two bare clients, on their own thread and on an event loop, against a raw ping-pong server of
 * this JVM over {@link FakeLibRpma#loopback()}: every round trip checked and measured, nothing left
 * open, load_client's RESULT line.
 */
class BarePingPongClientTest {

    private static final String ADDRESS = "192.0.2.1";

    private static final int PORT = 7601;

    private final Loopback loopback = new Loopback();


    @AfterEach
    void stop() {
        this.loopback.close();
    }

    @Test
    void onItsOwnThreadEveryRoundTripAfterTheWarmUpIsMeasured(@TempDir Path dir) throws IOException {
        this.loopback.listenPingPong(ADDRESS, PORT, 1);
        Path latencies = dir.resolve("lat");
        Result result = BarePingPongClient.run(this.loopback.rpma, options("--rounds 300 --warmup 50 --latency-file " + latencies));
        assertMeasured(result, latencies);
    }

    @ParameterizedTest(name = "a future per round trip: {0}")
    @ValueSource(booleans = { false, true })
    void onAnEventLoopEveryRoundTripAfterTheWarmUpIsMeasured(boolean futures, @TempDir Path dir) throws IOException {
        this.loopback.listenPingPong(ADDRESS, PORT, 1);
        Path latencies = dir.resolve("lat");
        Result result = bareLoopWith(BareLoopPingPongClient.FUTURES, Boolean.toString(futures),
                "--rounds 300 --warmup 50 --latency-file " + latencies);
        assertMeasured(result, latencies);
        assertThat(result.line()).containsPattern(" loop_wakeups_per_msg=\\d+\\.\\d{3}"
                + (futures ? " future_per_exchange=1$" : "$"));
    }

    @Test
    void onAnEventLoopItCanReadPagesAfterEachReply() {
        this.loopback.listenPingPong(ADDRESS, PORT, 1);
        Result result = bareLoopWith(BareLoopPingPongClient.TOUCH_PAGES, "16", "--rounds 50");
        assertThat(result.ok()).as(result.line()).isTrue();
        assertThat(result.line()).contains(" rounds=50 ");
    }

    @Test
    void throughAFutureAWrongReplyFailsTheRunToo() {
        this.loopback.listenPingPong(ADDRESS, PORT, 2);
        Result result = bareLoopWith(BareLoopPingPongClient.FUTURES, "true", "--rounds 20");
        assertThat(result.ok()).isFalse();
        assertThat(result.line()).contains(" rounds=0 ").contains(" errors=1 ").endsWith(" future_per_exchange=1");
    }

    @Test
    void aWrongReplyFailsTheRunOnEither() {
        this.loopback.listenPingPong(ADDRESS, PORT, 2);
        for (Result result : List.of(BarePingPongClient.run(this.loopback.rpma, options("--rounds 20")),
                BareLoopPingPongClient.run(this.loopback.rpma, options("--rounds 20")))) {
            assertThat(result.ok()).isFalse();
            assertThat(result.line()).contains(" rounds=0 ").contains(" errors=1 ");
        }
    }

    @Test
    void withoutAServerEitherSaysSoAndLeavesNothingOpen() {
        for (Result result : List.of(BarePingPongClient.run(this.loopback.rpma, options("--rounds 5")),
                BareLoopPingPongClient.run(this.loopback.rpma, options("--rounds 5")))) {
            assertThat(result.ok()).isFalse();
            assertThat(result.line()).startsWith("ERROR the connection was not established: ");
        }
        this.loopback.fake.assertAllFreed();
    }

    @Test
    void onlyOneConnectionWithOneMessageInFlight() {
        assertThatIllegalArgumentException().isThrownBy(() -> options("--inflight 2"));
        assertThatIllegalArgumentException().isThrownBy(() -> options("--concurrency 4"));
        assertThatIllegalArgumentException().isThrownBy(() -> options("--busy-poll-us 50"));
        assertThat(options("--concurrency 1 --inflight 1 --timeout 30")).isEqualTo(new Options(ADDRESS, PORT, 2000, 0,
                null));
    }

    /** A run of the bare loop with the system property {@code name} set to {@code value} for it. */
    private Result bareLoopWith(String name, String value, String arguments) {
        System.setProperty(name, value);
        try {
            return BareLoopPingPongClient.run(this.loopback.rpma, options(arguments));
        }
        finally {
            System.clearProperty(name);
        }
    }

    private static void assertMeasured(Result result, Path latencies) throws IOException {
        assertThat(result.ok()).as(result.line()).isTrue();
        assertThat(result.line()).startsWith("RESULT pingpong addr=192.0.2.1 concurrency=1 rounds=300 seconds=")
            .contains(" retries=0 errors=0 inflight=1").matches(".* p50_us=[0-9.]+ p99_us=[0-9.]+ .*");
        assertThat(Files.readAllLines(latencies).stream().map(Long::parseLong).toList()).hasSize(300).isSorted()
            .allMatch((ns) -> ns > 0);
    }

    private static Options options(String extra) {
        return Options.parse(List.of(("pingpong " + ADDRESS + " " + PORT + " " + extra).trim().split(" ")));
    }
}
