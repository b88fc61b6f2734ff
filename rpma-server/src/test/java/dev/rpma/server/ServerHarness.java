package dev.rpma.server;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.Errno;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.io.MemoryLockLimit;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;

/**
 * A server with one endpoint (or more) over the scripted fake: the settings a test varies, the
 * server, the fake endpoint to script, what the session listeners heard, and a bounded wait for
 * asynchronous outcomes. {@link #close()} stops the server and closes the fake.
 */
public final class ServerHarness implements AutoCloseable {

    public static final String ADDRESS = "198.18.0.1";

    public static final int PORT = 7204;

    /**
     * How long a test waits for an asynchronous outcome before it fails. The mutation tests shorten it
     * ({@code rpma.test.wait-millis}): a mutant that keeps the outcome from coming then fails its test
     * instead of timing out, which costs pitest a new JVM.
     */
    public static final Duration WAIT = Duration.ofMillis(Long.getLong("rpma.test.wait-millis", 10_000));

    public final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true)
        .requireNonBlockingConnectionEventFds(true);

    /** What the session listeners heard, in order: "ESTABLISHED" and the end reasons' names. */
    public final List<String> events = new CopyOnWriteArrayList<>();

    public final List<RpmaSession> established = new CopyOnWriteArrayList<>();

    public final List<RpmaSessionEnd> ended = new CopyOnWriteArrayList<>();

    public final List<String> listenerThreads = new CopyOnWriteArrayList<>();

    public RpmaServer server;

    public FakeEndpoint endpoint;

    public RpmaEndpointSettings.Acceptor acceptor = new RpmaEndpointSettings.Acceptor(8, 2, Duration.ofSeconds(5),
            Duration.ofMillis(50), 10, false, true, RpmaEndpointSettings.Acceptor.DEFAULT_SPIN_LOOKS);

    public RpmaEndpointSettings.Messages messages = RpmaEndpointSettings.Messages.DEFAULTS.withMode(RpmaWireMode.RAW)
        .withMaxMessageSize(64);

    public RpmaEndpointSettings.Limits limits = RpmaEndpointSettings.Limits.DEFAULTS;

    public Duration gracePeriod = Duration.ofMillis(20);

    /**
     * How long a stop waits for what it ends before it logs what it leaves and returns. The mutation tests
     * shorten it ({@code rpma.test.shutdown-millis}): a mutant that keeps a connection or a thread from ending
     * then fails the test's check that everything was released instead of timing out.
     */
    public Duration shutdownTimeout = Duration.ofMillis(Long.getLong("rpma.test.shutdown-millis",
            RpmaServerSettings.DEFAULT_SHUTDOWN_TIMEOUT.toMillis()));

    public int eventLoops = 1;

    /** The longest pause between looks for a lost device; zero: no recovery. */
    public Duration deviceRecovery = RpmaServerSettings.DEFAULT_DEVICE_RECOVERY;

    public Duration busyPoll = Duration.ZERO;

    /** The message handlers of the endpoint by route; empty: no data path. */
    public Map<String, RpmaMessageListener> messageHandlers = new LinkedHashMap<>();

    public List<RpmaRegionDefinition> regions = new ArrayList<>();

    public RpmaServerObserver observer = RpmaServerObserver.NONE;

    /** The endpoint's admission step; {@code null}: none. */
    public @Nullable RpmaAdmission admission;

    /** What the fake's registrations count against; none by default. */
    public MemoryLockLimit memoryLockLimit = MemoryLockLimit.NONE;

    /** The default endpoint's own peer, or {@code null} for the address's shared one. */
    public @Nullable String peer;

    /** Endpoints besides the default one, served by the same handlers. */
    public List<RpmaEndpointSettings> moreEndpoints = new ArrayList<>();

    public ServerHarness start(RpmaRequestHandler handler) {
        listen(handler);
        this.server.start();
        return this;
    }

    /**
     * A connection handler that notes the thread it runs on in {@code threads}, connects a request whose
     * private data starts with 1 and rejects any other.
     */
    public static RpmaRequestHandler connectingOnes(List<String> threads) {
        return (request) -> {
            threads.add(Thread.currentThread().getName());
            if (request.privateData()[0] == 1) {
                request.connect();
            }
            else {
                request.reject();
            }
        };
    }

    /** A request with private data {@code 1}, connected, and one with {@code 2}, rejected. */
    public FakeConnection connectOneAndRejectOne() {
        FakeConnection connected = connectOne(new byte[] { 1 });
        FakeRequest rejected = this.endpoint.queueRequest(new byte[] { 2 });
        await("the reject", () -> rejected.state() == FakeRequest.State.DELETED);
        return connected;
    }

    /** Serves raw messages with {@code handler}, and connects every request. */
    public ServerHarness startRaw(RpmaMessageListener handler) {
        this.messageHandlers.put("", handler);
        return start(RpmaIncomingRequest::connect);
    }

    public RpmaEndpointSettings settings() {
        return new RpmaEndpointSettings(RpmaEndpointSettings.DEFAULT_ENDPOINT, ADDRESS, PORT, this.acceptor,
                this.messages, this.limits, this.peer);
    }

    /** The server listening, not yet accepting. */
    public ServerHarness listen(RpmaRequestHandler handler) {
        List<RpmaEndpointSettings> endpoints = new ArrayList<>(List.of(settings()));
        endpoints.addAll(this.moreEndpoints);
        RpmaServerSettings settings = new RpmaServerSettings(this.eventLoops, this.busyPoll, this.gracePeriod,
                this.shutdownTimeout, endpoints, this.regions, this.deviceRecovery);
        Rpma rpma = Rpma.using(this.fake, this.memoryLockLimit);
        this.server = RpmaServer.listen(rpma, settings, new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String endpointName) {
                return handler;
            }

            @Override
            public Map<String, RpmaMessageListener> messageListeners(String endpoint) {
                return ServerHarness.this.messageHandlers;
            }

            @Override
            public @Nullable RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings endpoint,
                    RpmaQueueSizes needed) {
                return rpma.newConnectionConfig().cqSize(Math.max(16, needed.cq())).sqSize(Math.max(10, needed.sq()))
                    .rqSize(Math.max(10, needed.rq()));
            }

            @Override
            public @Nullable RpmaAdmission admission(String endpoint) {
                return ServerHarness.this.admission;
            }

            @Override
            public RpmaServerObserver observer() {
                return ServerHarness.this.observer;
            }

            @Override
            public List<RpmaSessionListener> sessionListeners(String endpoint) {
                return List.of(new RpmaSessionListener() {

                    @Override
                    public void sessionEstablished(RpmaSession session) {
                        ServerHarness.this.listenerThreads.add(Thread.currentThread().getName());
                        ServerHarness.this.established.add(session);
                        ServerHarness.this.events.add("ESTABLISHED");
                    }

                    @Override
                    public void sessionEnded(RpmaSession session, RpmaSessionEnd end) {
                        ServerHarness.this.listenerThreads.add(Thread.currentThread().getName());
                        ServerHarness.this.ended.add(end);
                        ServerHarness.this.events.add(end.reason().name());
                    }
                });
            }
        });
        this.endpoint = this.fake.endpointAt(ADDRESS, PORT);
        return this;
    }

    public RpmaServedEndpoint served() {
        return this.server.endpoint(RpmaEndpointSettings.DEFAULT_ENDPOINT);
    }

    public RpmaEndpointStatistics statistics() {
        return served().statistics();
    }

    /** A request with {@code privateData}, connected by the handler, and its connection once established. */
    public FakeConnection connectOne(byte[] privateData) {
        int before = this.established.size();
        FakeRequest request = this.endpoint.queueRequest(privateData);
        await("the connect", () -> request.connection() != null);
        await("ESTABLISHED heard", () -> this.established.size() > before);
        return request.connection();
    }

    public FakeConnection connectOne() {
        return connectOne(new byte[] { 1 });
    }

    public void await(String what, BooleanSupplier condition) {
        if (!this.fake.await(WAIT, condition)) {
            throw new AssertionError("timed out waiting for " + what + "; violations: " + this.fake.violations() + "\n"
                    + diagnostics());
        }
    }

    /**
     * What a timed-out wait needs to be understood afterwards: the endpoint's counts, the last calls
     * into the fake, and where the server's threads were.
     */
    private String diagnostics() {
        StringBuilder out = new StringBuilder();
        if (this.server != null) {
            RpmaEndpointStatistics statistics = statistics();
            out.append("endpoint: state ").append(served().state()).append(", obtained ").append(statistics.obtained())
                .append(", accepted ").append(statistics.accepted()).append(", failed to connect ")
                .append(statistics.failedToConnect()).append(", rejected ").append(statistics.rejectedTotal());
            for (RejectReason reason : RejectReason.values()) {
                long count = statistics.rejected(reason);
                if (count > 0) {
                    out.append(' ').append(reason).append('=').append(count);
                }
            }
            out.append(", errors ").append(statistics.errors()).append('\n');
        }
        if (this.endpoint != null) {
            out.append("scripted results not yet returned: ").append(this.endpoint.pending()).append(", requests: ");
            this.endpoint.obtainedRequests().forEach((request) -> out.append(request.state()).append(' '));
            out.append('\n');
        }
        // the acceptor's empty looks, once per poll interval, would hide everything else
        List<dev.rpma.binding.testing.FakeCall> calls = this.fake.callLog()
            .stream()
            .filter((call) -> !(call.function().equals("rpma_ep_next_conn_req") && call.errno() == Errno.EAGAIN))
            .toList();
        out.append("last calls but the empty looks:\n");
        calls.subList(Math.max(0, calls.size() - 15), calls.size())
            .forEach((call) -> out.append("  ").append(call).append('\n'));
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            if (thread.getName().startsWith("rpma")) {
                out.append("thread ").append(thread.getName()).append(' ').append(thread.getState()).append('\n');
                for (int i = 0; i < Math.min(12, stack.length); i++) {
                    out.append("    at ").append(stack[i]).append('\n');
                }
            }
        });
        return out.toString();
    }

    /** Stops the server and waits until everything native is released. */
    public void stop() {
        if (this.server != null) {
            this.server.close();
        }
    }

    /** Stops the server, fails on any librpma usage violation or object left unfreed, and closes the fake. */
    public void closeAndAssertNothingLeaked() {
        stop();
        this.fake.assertCleanAndClose();
    }

    @Override
    public void close() {
        try {
            stop();
        }
        finally {
            this.fake.close();
        }
    }

    /**
     * The binding's connection under a session, for a test that plays another thread making a native
     * call on it; the server itself never hands it out.
     */
    public static RpmaConnection connectionOf(RpmaSession session) {
        try {
            Field field = ServerSession.class.getDeclaredField("connection");
            field.setAccessible(true);
            return (RpmaConnection) field.get(session);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** An 8-byte little-endian message, as librpma's example 08 sends. */
    public static byte[] u64(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value).array();
    }

    public static long u64(byte[] message) {
        return ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }
}
