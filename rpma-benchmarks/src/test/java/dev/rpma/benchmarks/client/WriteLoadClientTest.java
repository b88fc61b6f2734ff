package dev.rpma.benchmarks.client;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.benchmarks.client.LoadRuns.Result;
import dev.rpma.benchmarks.client.WriteLoadClient.Options;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaRegionDefinition;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaWireMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The write load client against a server of this JVM exposing a region over {@link FakeLibRpma#loopback()}:
 * every write and flush counted, the bytes landing where the C client puts them, the RESULT line in
 * load_client's format.
 */
class WriteLoadClientTest {

    private static final String ADDRESS = "192.0.2.1";

    private static final int PORT = 7601;

    private final Loopback loopback = new Loopback();

    private final ByteBuffer region = ByteBuffer.allocateDirect(4096);


    @AfterEach
    void stop() {
        this.loopback.close();
    }

    @Test
    void everyChainWritesItsOwnBytesIntoItsPlaceAndFlushesThem() {
        listen(EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY));
        Result result = WriteLoadClient.run(this.loopback.rpma, options("--size 512 --rounds 50 --warmup 5 --concurrency 2"
                + " --inflight 2"));
        assertThat(result.ok()).as(result.line()).isTrue();
        assertThat(result.line()).startsWith("RESULT write addr=192.0.2.1 concurrency=2 size=512 rounds=100 seconds=")
            .matches(".* mib_s=[0-9.]+ p50_us=[0-9.]+ p99_us=[0-9.]+ .*").endsWith(" errors=0 inflight=2 flush=visibility");
        // chain c writes bytes c*512 .. c*512+511 of the source, whose byte i is (byte) i, at c*512
        for (int i = 0; i < 4 * 512; i++) {
            assertThat(this.region.get(i)).as("byte " + i).isEqualTo((byte) i);
        }
    }

    @Test
    void aRegionThatRefusesTheFlushFailsTheRun() {
        listen(EnumSet.of(MemoryUsage.WRITE_DST));
        Result result = WriteLoadClient.run(this.loopback.rpma, options("--size 64 --rounds 10 --timeout 10"));
        assertThat(result.ok()).isFalse();
        assertThat(result.line()).contains(" rounds=0 ").doesNotContain(" errors=0 ");
    }

    @Test
    void aRegionSmallerThanOneWriteFailsTheRunSayingSo() {
        listen(EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY));
        Result result = WriteLoadClient.run(this.loopback.rpma, options("--size 8192 --rounds 10 --timeout 10"));
        assertThat(result.ok()).isFalse();
        assertThat(result.line()).contains(" rounds=0 ").contains(" errors=1 ");
    }

    @Test
    void commandsRunOneLineEachAndSayWhichAreNotRuns() throws IOException {
        listen(EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        WriteLoadClient.commands(this.loopback.rpma, new BufferedReader(new StringReader("write " + ADDRESS + " " + PORT
                + " --size 64 --rounds 20\nwrite " + ADDRESS + " " + PORT + "\n")), new PrintStream(out, true,
                        StandardCharsets.UTF_8));
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).satisfiesExactly(
                (line) -> assertThat(line).startsWith("RESULT write ").contains(" rounds=20 ").contains(" errors=0 "),
                (line) -> assertThat(line).isEqualTo("ERROR write needs --size"));
    }

    @Test
    void optionsAreCheckedAsTheCClientChecksThem() {
        assertThatIllegalArgumentException().isThrownBy(() -> options("--size 0"));
        assertThatIllegalArgumentException().isThrownBy(() -> options("--size 8 --inflight 33"));
        assertThatIllegalArgumentException().isThrownBy(() -> options("--size 1073741824 --concurrency 4"));
        assertThatIllegalArgumentException().isThrownBy(() -> Options.parse(List.of("pingpong", ADDRESS, "7")));
        assertThat(options("--size 4096")).isEqualTo(new Options(ADDRESS, PORT, 4096, 2000, 1, 0, 1, 600, null, 1, 0));
    }

    private static Options options(String extra) {
        return Options.parse(List.of(("write " + ADDRESS + " " + PORT + " " + extra).split(" ")));
    }

    /** A raw endpoint without message handlers whose accept carries the region's common_data, as example 05's. */
    private void listen(Set<MemoryUsage> usages) {
        RpmaEndpointSettings endpoint = new RpmaEndpointSettings("flush", ADDRESS, PORT)
            .withMessages(RpmaEndpointSettings.Messages.DEFAULTS.withMode(RpmaWireMode.RAW).withMaxMessageSize(Long.BYTES));
        RpmaRegionDefinition exposed = new RpmaRegionDefinition("persistent", this.region, usages, Set.of());
        this.loopback.serve(RpmaServer.listen(this.loopback.rpma, RpmaServerSettings.of(List.of(endpoint))
            .withEventLoops(1, Duration.ZERO)
            .withGracePeriod(Duration.ZERO)
            .withRegions(List.of(exposed)), Loopback.components(
                    (request) -> request.connect(request.commonData("persistent").encode()), Map.of())));
    }
}
