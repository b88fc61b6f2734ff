package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Peers that are not what they should be, against the sample app over the veth pair: requests with
 * wrong, expired and replayed admission tokens, a flood of connection requests, and private data
 * made to forge log lines. The app runs with an admission key and a request-rate limit on its hello
 * endpoint ({@code docs/security.md}); the ping-pong endpoint takes requests without a token and
 * without a limit, and serves C clients throughout. Counts are read from {@code /actuator/rpma} and
 * {@code /actuator/prometheus}, the log from the app's own output.
 */
@Tag("rdma")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class HostilePeersEndToEndTests {

    static final String SECRET = "e2e-admission-secret-0123456789abcdef";

    static final RpmaAdmissionKey KEY = RpmaAdmissionKey.of(1, SECRET);

    /** The hello endpoint's rate: below what one flooding client reaches under the emulator (about 20 a second). */
    static final int REQUESTS_PER_SECOND = 5;

    static final int REQUEST_BURST = 5;

    static final int FLOOD = 400;

    static final Duration ALLOWANCE = Duration.ofSeconds(120);

    private static final byte[] GREETING = ExampleProtocols.cString(ExampleProtocols.CLIENT_GREETING);

    private E2eEnvironment environment;

    private SampleAppProcess app;

    @BeforeAll
    void startTheApp() throws Exception {
        this.environment = E2eEnvironment.get();
        long start = System.nanoTime();
        this.app = SampleAppProcess.start(this.environment, "sample-app-hostile", Duration.ofMinutes(8),
                "--rpma.server.address=" + serverAddress(), "--rpma.server.shutdown.grace-period=5s",
                "--rpma.server.admission.keys[0].id=1", "--rpma.server.admission.keys[0].secret=" + SECRET,
                // the flood's tokens are made before it starts and used over a minute
                "--rpma.server.admission.max-clock-skew=10m",
                "--rpma.server.limits.requests-per-second=" + REQUESTS_PER_SECOND,
                "--rpma.server.limits.request-burst=" + REQUEST_BURST,
                "--rpma.server.endpoints.pingpong.admission.keys=",
                "--rpma.server.endpoints.pingpong.limits.requests-per-second=100000",
                "--rpma.server.endpoints.read.admission.keys=");
        this.environment.record("hostile", "app started in " + seconds(System.nanoTime() - start));
    }

    @AfterAll
    void stopTheApp() throws Exception {
        if (this.app != null) {
            this.app.close();
        }
    }

    @Test
    @Order(1)
    void wrongExpiredAndReplayedTokensAreRejectedAsUnauthenticatedWhileValidOnesAreServed() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        byte[] valid = RpmaAdmissionToken.issue(KEY, GREETING);
        assertServed(hello("valid", valid));
        assertRejected(hello("replayed", valid));
        assertRejected(hello("wrong-secret",
                RpmaAdmissionToken.issue(RpmaAdmissionKey.of(1, SECRET.replace('e', 'f')), GREETING)));
        assertRejected(hello("unknown-key", RpmaAdmissionToken.issue(RpmaAdmissionKey.of(2, SECRET), GREETING)));
        long anHourAgo = System.currentTimeMillis() / 1000 - 3600;
        assertRejected(hello("expired", RpmaAdmissionToken.issue(KEY, anHourAgo, 42L, GREETING)));
        byte[] tampered = RpmaAdmissionToken.issue(KEY, GREETING);
        tampered[tampered.length - 2] ^= 1;
        assertRejected(hello("tampered", tampered));
        assertRejected(hello("no-token", GREETING));
        assertServed(hello("valid-again", RpmaAdmissionToken.issue(KEY, GREETING)));

        Map<String, Long> changes = AppNumbers.read(this.app).changesSince(before);
        for (String source : AppNumbers.SOURCES) {
            assertThat(changes.get(source + " default rejected unauthenticated")).as(source + ": " + changes)
                .isEqualTo(6);
            assertThat(changes.get(source + " default accepted")).as(source).isEqualTo(2);
            assertThat(changes.get(source + " default rejected handler")).as(source).isZero();
        }
        this.environment.record("hostile", "2 valid tokens served; replayed, wrong-secret, unknown-key, expired,"
                + " tampered and missing tokens rejected as unauthenticated");
    }

    @Test
    @Order(2)
    void bytesFromAPeerNeverStartALogLineNorReachTheLogRaw() throws Exception {
        long logBefore = Files.size(this.app.logFile());
        List<byte[]> payloads = List.of(ascii("x\nERROR forged line\n"), ascii("y\r\u001b[31mERROR forged\u001b[0m"),
                controls(0x01, 25), controls(0x00, 8), ascii("z\\\u007fERROR forged\t"));
        List<String> lines = new ArrayList<>();
        for (byte[] payload : payloads) {
            lines.add(HexFormat.of().formatHex(RpmaAdmissionToken.issue(KEY, payload)));
        }
        Path file = writeLines("forged-private-data", lines);
        CClient.Result result = CClient.run(this.environment, "reject_flood", "forged-private-data", ALLOWANCE,
                serverAddress(), String.valueOf(ExampleProtocols.HELLO_PORT), String.valueOf(payloads.size()),
                "--private-data-file", file.toString(), "--timeout", "100");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        // the handler's line comes after the reject: wait until it logged all of them
        awaitLog(logBefore, "hello: rejecting", payloads.size());

        byte[] written = newLogBytes(logBefore);
        for (byte b : written) {
            // non-ASCII (negative) bytes are the app's own UTF-8; a peer's would be escaped
            assertThat(b == '\n' || b == '\t' || b < 0 || (b >= 0x20 && b != 0x7f))
                .as("a byte 0x%02x reached the log", b & 0xff).isTrue();
        }
        String text = new String(written, StandardCharsets.UTF_8);
        assertThat(text.lines()).noneMatch((line) -> line.startsWith("ERROR forged"))
            .noneMatch((line) -> line.startsWith("\u001b"));
        assertThat(text).contains("x\\x0aERROR forged line\\x0a")
            .contains("y\\x0d\\x1b[31mERROR forged\\x1b[0m")
            .contains("\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f\\x10")
            .contains("z\\x5c\\x7fERROR forged\\x09");
        this.environment.record("hostile", payloads.size() + " requests with LF, CR, ESC, DEL and 0x00-0x1f in their"
                + " private data: each logged escaped on one line");
    }

    @Test
    @Order(3)
    void aConnectFloodIsRateLimitedAtABoundedCostWhileOtherClientsAreServed() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        // valid tokens, so that the requests pass the admission step and meet the rate limit; the greeting is
        // wrong, so that those the limit lets through are rejected by the handler
        byte[] stranger = ExampleProtocols.cString("Hello stranger!");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < FLOOD; i++) {
            lines.add(HexFormat.of().formatHex(RpmaAdmissionToken.issue(KEY, stranger)));
        }
        Path file = writeLines("flood", lines);
        long cpuBefore = this.app.cpuMillis();
        long start = System.nanoTime();
        CClient flood = CClient.start(this.environment, "reject_flood", "rate-limited-flood", serverAddress(),
                String.valueOf(ExampleProtocols.HELLO_PORT), String.valueOf(FLOOD), "--private-data-file",
                file.toString(), "--timeout", "400");
        int served = 0;
        while (flood.isAlive()) {
            CClient.Result pingPong = CClient.run(this.environment, "pingpong_client", "pingpong-during-rate-flood-"
                    + served, ALLOWANCE, serverAddress(), String.valueOf(ExampleProtocols.PING_PONG_PORT), "1000", "20",
                    "--timeout", "60", "--quiet");
            assertThat(pingPong.exitCode()).as(pingPong.toString()).isZero();
            assertThat(pingPong.result("last")).isEqualTo(1019);
            served++;
        }
        CClient.Result result = flood.finish(ALLOWANCE);
        long elapsedNanos = System.nanoTime() - start;
        long cpu = this.app.cpuMillis() - cpuBefore;
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(served).as("ping-pong sessions served while the flood ran").isPositive();

        Map<String, Long> changes = AppNumbers.read(this.app).changesSince(before);
        long limited = changes.get("rpma default rejected rate-limited");
        long handled = changes.get("rpma default rejected handler");
        double seconds = elapsedNanos / 1e9;
        for (String source : AppNumbers.SOURCES) {
            assertThat(changes.get(source + " default rejected rate-limited")
                    + changes.get(source + " default rejected handler")).as(source + ": " + changes).isEqualTo(FLOOD);
            assertThat(changes.get(source + " default rejected unauthenticated")).as(source).isZero();
        }
        assertThat(handled).as("requests the limit let through to the handler in %.1f s", seconds)
            .isLessThanOrEqualTo(REQUEST_BURST + (long) Math.ceil(REQUESTS_PER_SECOND * seconds));
        assertThat(limited).as("requests refused as rate-limited").isPositive();
        this.environment.record("hostile", String.format("a flood of %d requests with valid tokens in %.1f s (%.0f a"
                + " second): %d rate-limited, %d reached the handler (limit %d a second, burst %d); %d ping-pong"
                + " sessions served meanwhile; the app used %d ms of CPU, %.2f ms per request, %.0f%% of one CPU",
                FLOOD, seconds, FLOOD / seconds, limited, handled, REQUESTS_PER_SECOND, REQUEST_BURST, served, cpu,
                (double) cpu / FLOOD, 100.0 * cpu / (seconds * 1000)));
    }

    @Test
    @Order(4)
    void underUlimitL64TheAppFailsAtStartWithTheAnalyzersMessage() throws Exception {
        // root may lock memory beyond the limit (CAP_IPC_LOCK): setpriv drops that, as for an unprivileged service
        List<String> command = new ArrayList<>(List.of("prlimit", "--memlock=65536:65536", "setpriv",
                "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock"));
        command.addAll(this.environment.javaCommand());
        command.addAll(List.of("-jar", this.environment.sampleJar().toString(), "--server.port=0",
                "--rpma.server.address=" + serverAddress()));
        Path log = this.environment.logDirectory().resolve("sample-app-ulimit-64.log");
        long start = System.nanoTime();
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertThat(process.waitFor(4, TimeUnit.MINUTES)).as("the app under ulimit -l 64 exits").isTrue();
        }
        finally {
            process.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(output).isNotZero();
        assertThat(output).contains("APPLICATION FAILED TO START", "this process may lock only 64 KiB (RLIMIT_MEMLOCK)",
                "'ulimit -l unlimited'", "'docker run --ulimit memlock=-1:-1'", "'LimitMEMLOCK=infinity'");
        this.environment.record("hostile", "under ulimit -l 64 without CAP_IPC_LOCK the app stopped with the memory-lock"
                + " analysis after " + seconds(System.nanoTime() - start));
    }

    private CClient.Result hello(String label, byte[] privateData) throws Exception {
        return CClient.run(this.environment, "hello_client", "hostile-hello-" + label, ALLOWANCE, serverAddress(),
                String.valueOf(ExampleProtocols.HELLO_PORT), "--attempts", "1", "--private-data-hex",
                HexFormat.of().formatHex(privateData), "--timeout", "90");
    }

    private static void assertServed(CClient.Result result) {
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.output()).contains("Received a message: " + ExampleProtocols.SERVER_GREETING);
    }

    private static void assertRejected(CClient.Result result) {
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
        assertThat(result.output()).as(result.toString()).contains("still rejected after 1 attempts");
    }

    private void awaitLog(long from, String text, int count) throws Exception {
        long deadline = System.nanoTime() + ALLOWANCE.toNanos();
        while (new String(newLogBytes(from), StandardCharsets.UTF_8).split(text, -1).length - 1 < count) {
            assertThat(System.nanoTime() - deadline).as("'%s' logged %d times", text, count).isNegative();
            Thread.sleep(200);
        }
    }

    private byte[] newLogBytes(long from) throws IOException {
        byte[] all = Files.readAllBytes(this.app.logFile());
        return Arrays.copyOfRange(all, (int) from, all.length);
    }

    private Path writeLines(String name, List<String> lines) throws IOException {
        Path file = this.environment.logDirectory().resolve("c-clients").resolve(name + ".hex");
        Files.createDirectories(file.getParent());
        return Files.write(file, lines);
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** {@code count} bytes counting up from {@code first}. */
    private static byte[] controls(int first, int count) {
        byte[] bytes = new byte[count];
        for (int i = 0; i < count; i++) {
            bytes[i] = (byte) (first + i);
        }
        return bytes;
    }

    private static String serverAddress() {
        return E2eEnvironment.address(E2eEnvironment.SERVER_IP);
    }

    private static String seconds(long nanos) {
        return String.format("%.1f s", nanos / 1e9);
    }
}
