package dev.rpma.sample.e2e;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientBuilder;
import dev.rpma.client.RpmaClientConnection;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.client.RpmaClientObserver;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaWireMode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java client ({@link RpmaClient}, raw mode) against servers written against librpma alone: the
 * C servers of {@code sample-app/src/test/c} that behave as librpma's example servers 01, 02 and 08
 * do, each serving one connection. The client completes each example's exchange, and each server
 * exits 0, which it does only when its side of the exchange completed as the example's does. Raw
 * mode, because these servers speak no framing: a framed client's first frame would find no receive
 * posted on a server that posts none. Each test runs on both topologies.
 */
@Tag("rdma")
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CServerEndToEndTests {

    static final int HELLO_PORT = 7301;

    static final int READ_PORT = 7302;

    static final int PING_PONG_PORT = 7303;

    static final int PING_PONG_ROUNDS = 100;

    /** The servers' own bound on their run ({@code --timeout}): a test that fails does not leave them behind. */
    static final String SERVER_TIMEOUT_SECONDS = "150";

    /** The emulator is slow to start a process and to connect; these bound it, they measure nothing. */
    static final Duration ALLOWANCE = Duration.ofSeconds(120);

    private E2eEnvironment environment;

    @BeforeEach
    void environment() throws Exception {
        this.environment = E2eEnvironment.get();
    }

    /**
     * Example 01: the client's private data reaches the server, the server's ({@code "Hello client!"})
     * reaches the client, and the server's disconnect ends the connection: the client answers it (the
     * server waits for that CLOSED) and its pooled connection backs off.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void theClientExchangesPrivateDataWithTheHelloServerAndAnswersItsDisconnect(Topology topology) throws Exception {
        CServer server = CServer.start(this.environment, "hello_server", "hello-server-" + topology, ALLOWANCE,
                topology.serverAddress(), String.valueOf(HELLO_PORT), "--timeout", SERVER_TIMEOUT_SECONDS);
        AtomicReference<RpmaClient> built = new AtomicReference<>();
        AtomicReference<byte[]> accepted = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        RpmaClientObserver observer = new RpmaClientObserver() {
            @Override
            public void connectionState(String client, RpmaClientConnectionState from, RpmaClientConnectionState to) {
                if (to == RpmaClientConnectionState.ESTABLISHED) {
                    // on the connection's loop, before its next event: the server's CLOSED, which clears the
                    // private data, cannot come in between
                    accepted.set(awaitBuilt(built).connections().get(0).privateData());
                }
                else if (from == RpmaClientConnectionState.ESTABLISHED) {
                    ended.countDown();
                }
            }
        };
        try (RpmaClient client = builder(topology, "hello", HELLO_PORT)
            .privateData(ExampleProtocols.cString(ExampleProtocols.CLIENT_GREETING))
            .observer(observer)
            .build()) {
            built.set(client);
            assertThat(ended.await(ALLOWANCE.toSeconds(), TimeUnit.SECONDS))
                .as("the server ended the connection; its output:\n" + server.output()).isTrue();
            CClient.Result result = server.finish(ALLOWANCE);
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.output()).contains("Received a message: " + ExampleProtocols.CLIENT_GREETING);
            assertThat(accepted.get()).as("the accept's private data").isNotNull();
            assertThat(cString(accepted.get())).isEqualTo(ExampleProtocols.SERVER_GREETING);
            assertThat(client.connections().get(0).state()).as("after the server's disconnect")
                .isEqualTo(RpmaClientConnectionState.BACKING_OFF);
        }
        finally {
            server.kill();
        }
    }

    /**
     * Example 02: the accept's private data is {@code struct common_data} with the descriptor of the
     * server's region; the client reads {@code "Hello client!"} out of it with {@code rpma_read} into
     * memory registered with its own peer, then disconnects, which is what the server waits for.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void theClientReadsTheReadServersRegionDescribedInTheAcceptsCommonData(Topology topology) throws Exception {
        CServer server = CServer.start(this.environment, "read_server", "read-server-" + topology, ALLOWANCE,
                topology.serverAddress(), String.valueOf(READ_PORT), "--timeout", SERVER_TIMEOUT_SECONDS);
        byte[] expected = ExampleProtocols.cString(ExampleProtocols.READ_CONTENT);
        try {
            try (RpmaClient client = builder(topology, "read", READ_PORT).build()) {
                RpmaClientConnection connection = awaitEstablished(client);
                RpmaCommonData common = connection.commonData();
                assertThat(common).as("common_data in the accept's private data").isNotNull();
                assertThat(common.dataOffset()).isZero();
                ByteBuffer local = ByteBuffer.allocateDirect(64);
                try (RpmaMemoryRegion destination = client.register(local, MemoryUsage.READ_DST)) {
                    connection.read(destination, 0, common.dataOffset(), expected.length)
                        .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
                }
                byte[] read = new byte[expected.length];
                local.get(0, read);
                assertThat(read).as("the server's region, read").isEqualTo(expected);
            }
            CClient.Result result = server.finish(ALLOWANCE);
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.output()).contains("Client disconnected");
        }
        finally {
            server.kill();
        }
    }

    /**
     * Example 08: 8-byte counters in raw mode, each {@code exchange} answered with the counter plus one
     * (the server posts its next receive before it answers, so one exchange at a time, the client's
     * default raw window); then I_M_DONE, after which the server disconnects and exits.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void theClientPlaysPingPongWithThePingPongServerUntilItSaysItIsDone(Topology topology) throws Exception {
        CServer server = CServer.start(this.environment, "pingpong_server", "pingpong-server-" + topology, ALLOWANCE,
                topology.serverAddress(), String.valueOf(PING_PONG_PORT), "--timeout", SERVER_TIMEOUT_SECONDS,
                "--quiet");
        long seed = 1000;
        try (RpmaClient client = builder(topology, "pingpong", PING_PONG_PORT).maxMessageSize(8).build()) {
            awaitEstablished(client);
            long counter = seed;
            long start = System.nanoTime();
            for (int i = 0; i < PING_PONG_ROUNDS; i++) {
                byte[] reply = client.exchange(counter(counter)).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
                assertThat(reply).as("reply " + i).hasSize(8);
                long value = ByteBuffer.wrap(reply).order(ByteOrder.LITTLE_ENDIAN).getLong();
                assertThat(value).as("reply " + i).isEqualTo(counter + 1);
                counter = value;
            }
            long elapsed = System.nanoTime() - start;
            client.send(counter(ExampleProtocols.I_M_DONE)).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
            CClient.Result result = server.finish(ALLOWANCE);
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.result("rounds")).isEqualTo(PING_PONG_ROUNDS);
            assertThat(result.result("last")).isEqualTo(seed + PING_PONG_ROUNDS);
            this.environment.record(topology.toString(), "Java client against the C ping-pong server: "
                    + PING_PONG_ROUNDS + " exchanges, mean round trip " + elapsed / PING_PONG_ROUNDS / 1000
                    + " us (software emulation: compare only ratios)");
        }
        finally {
            server.kill();
        }
    }

    /**
     * Raw mode, one connection; a back-off longer than a test, so that a connection the server ended is
     * not made again (against a server that has exited) before the client closes.
     */
    private static RpmaClientBuilder builder(Topology topology, String name, int port) {
        return RpmaClient.builder(Rpma.get())
            .name(name + "-" + topology)
            .address(topology.serverAddress())
            .port(port)
            .mode(RpmaWireMode.RAW)
            .connectTimeout(Duration.ofSeconds(60))
            .requestTimeout(ALLOWANCE)
            .backoff(Duration.ofMinutes(5), 2.0, Duration.ofMinutes(5));
    }

    private static RpmaClientConnection awaitEstablished(RpmaClient client) throws InterruptedException {
        long deadline = System.nanoTime() + ALLOWANCE.toNanos();
        while (client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) < 1) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("No connection of " + client + " was established within " + ALLOWANCE
                        + ": " + client.connections());
            }
            Thread.sleep(20);
        }
        return client.connection();
    }

    /**
     * The client being built: {@code build()} starts the connections before it returns, so the first
     * state change may in principle come before the test has the client in hand; it has it a moment later.
     */
    private static RpmaClient awaitBuilt(AtomicReference<RpmaClient> built) {
        RpmaClient client;
        while ((client = built.get()) == null) {
            Thread.onSpinWait();
        }
        return client;
    }

    private static byte[] counter(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value).array();
    }

    /** The bytes up to the first NUL (the transport pads private data with zeros), as ASCII. */
    private static String cString(byte[] bytes) {
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(Arrays.copyOf(bytes, end), StandardCharsets.US_ASCII);
    }
}
