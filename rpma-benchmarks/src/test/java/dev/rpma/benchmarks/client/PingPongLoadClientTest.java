package dev.rpma.benchmarks.client;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.rpma.benchmarks.client.PingPongLoadClient.Options;
import dev.rpma.benchmarks.client.LoadRuns.Result;
import dev.rpma.binding.testing.FakeLibRpma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The load client against a raw ping-pong server of this JVM over {@link FakeLibRpma#loopback()}: every
 * message counted and checked, the RESULT line in load_client's format.
 */
class PingPongLoadClientTest {

    private static final String ADDRESS = "192.0.2.1";

    private static final int PORT = 7600;

    private final Loopback loopback = new Loopback();


    @AfterEach
    void stop() {
        this.loopback.close();
    }

    @Test
    void oneConnectionOneInFlightMeasuresEveryRoundTripAfterTheWarmUp(@TempDir Path dir) throws IOException {
        listen(1);
        Path latencies = dir.resolve("lat");
        Result result = PingPongLoadClient.run(this.loopback.rpma,
                options("--rounds 300 --warmup 50 --latency-file " + latencies));
        assertThat(result.ok()).as(result.line()).isTrue();
        assertThat(result.line()).startsWith("RESULT pingpong addr=192.0.2.1 concurrency=1 rounds=300 seconds=")
            .contains(" retries=0 errors=0 inflight=1").matches(".* p50_us=[0-9.]+ p99_us=[0-9.]+ .*");
        List<Long> lines = Files.readAllLines(latencies).stream().map(Long::parseLong).toList();
        assertThat(lines).hasSize(300).isSorted().allMatch((ns) -> ns > 0);
    }

    @Test
    void manyConnectionsKeepTheirMessagesInFlight() {
        listen(1);
        Result result = PingPongLoadClient.run(this.loopback.rpma, options("--rounds 100 --warmup 10 --concurrency 3 --inflight 4"));
        assertThat(result.ok()).as(result.line()).isTrue();
        assertThat(result.line()).contains(" concurrency=3 rounds=300 ").contains(" errors=0 inflight=4 ")
            .containsPattern(" loop_wakeups_per_msg=\\d+\\.\\d{3} jit_wait_ms=\\d+ jit_run_ms=-?\\d+$");
    }

    @Test
    void aWrongReplyFailsTheRun() {
        listen(2);
        Result result = PingPongLoadClient.run(this.loopback.rpma, options("--rounds 20 --timeout 10"));
        assertThat(result.ok()).isFalse();
        assertThat(result.line()).contains(" rounds=0 ").contains(" errors=1 ");
    }

    @Test
    void commandsRunOneLineEachAndSayWhichAreNotRuns() throws IOException {
        listen(1);
        String port = String.valueOf(PORT);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PingPongLoadClient.commands(this.loopback.rpma, new BufferedReader(new StringReader("pingpong " + ADDRESS + " " + port
                + " --rounds 20\n\npingpong " + ADDRESS + " " + port + " --inflight 0\n")), new PrintStream(out, true,
                        StandardCharsets.UTF_8));
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).satisfiesExactly(
                (line) -> assertThat(line).startsWith("RESULT pingpong ").contains(" rounds=20 ").contains(" errors=0 "),
                (line) -> assertThat(line).isEqualTo("ERROR --inflight must be 1 to 1024, got 0"));
    }

    @Test
    void optionsAreCheckedAsTheCClientChecksThem() {
        assertThatIllegalArgumentException().isThrownBy(() -> options("--concurrency 1025"));
        assertThatIllegalArgumentException().isThrownBy(() -> options("--rounds x"));
        assertThatIllegalArgumentException().isThrownBy(() -> options("--rounds"));
        assertThatIllegalArgumentException().isThrownBy(() -> options("--cycles 3"));
        assertThatIllegalArgumentException().isThrownBy(() -> Options.parse(List.of("hello", ADDRESS, "7")));
        assertThat(options("")).isEqualTo(new Options(ADDRESS, PORT, 2000, 1, 0, 1, 600, null, 1, 0));
    }

    private static Options options(String extra) {
        String line = "pingpong " + ADDRESS + " " + PORT + (extra.isEmpty() ? "" : " " + extra);
        return Options.parse(List.of(line.split(" ")));
    }

    private void listen(int step) {
        this.loopback.listenPingPong(ADDRESS, PORT, step);
    }
}
