package dev.rpma.sample.e2e;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.ToDoubleFunction;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import dev.rpma.sampleclient.protocol.ExampleProtocols;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A soak: the sample app over the veth pair under mixed traffic of C clients for
 * {@code -Drpma.e2e.soak.minutes} (1.5 is the short run, which {@code tools/test-all.sh} and so CI run;
 * {@code tools/e2e/soak.sh} runs it for 20). It runs only when that property is set, so that
 * {@code run-e2e.sh} alone stays two minutes shorter. Six workers at once, each starting one client after the
 * other: hello and read connections, two of ping-pong sessions, floods of rejected requests, silent
 * connections the read endpoint's idle timeout ends, and ping-pong clients killed with SIGKILL
 * mid-session.
 *
 * <p>Every interval (15 s in a run shorter than 5 minutes, a minute otherwise) the traffic pauses:
 * the clients running finish, the app's sessions end, and then the app's resident set size, its heap
 * after a full GC, its live threads, its open file descriptors and the kernel's RDMA objects
 * ({@code rdma res show}) are sampled. At rest, an app that leaks nothing shows the same counts at
 * every sample, so one object kept per connection, of hundreds made per interval, stands out. After
 * a warm-up of two intervals (the JIT, the pools and lazily made objects) no series' least-squares
 * slope may rise beyond its tolerance, and at the end the RDMA counts must equal, and the file
 * descriptors nearly equal, those of the first sample after the warm-up.
 *
 * <p>The app runs with a fixed, pre-touched heap ({@code -Xms256m -Xmx256m -XX:+AlwaysPreTouch}), so
 * that its resident set follows native memory and not the heap's growth, and with a JMX connector on
 * loopback, through which the test triggers the GC and reads the heap and the threads.
 */
@Tag("rdma")
@EnabledIfSystemProperty(named = "rpma.e2e.soak.minutes", matches = ".+")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SoakEndToEndTests {

    static final double MINUTES = Double.parseDouble(System.getProperty("rpma.e2e.soak.minutes", "1.5"));

    static final Duration INTERVAL = MINUTES < 5 ? Duration.ofSeconds(15) : Duration.ofMinutes(1);

    static final int SAMPLES = (int) Math.round(MINUTES * 60 / INTERVAL.toSeconds());

    static final int WARM_UP_INTERVALS = 2;

    static final int IDLE_TIMEOUT_SECONDS = 3;

    static final int SILENT_CONNECTIONS = 4;

    static final int REJECTS_PER_RUN = 10;

    static final int PING_PONG_ROUNDS = 100;

    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(120);

    /** For the app's sessions to end, and the kernel's objects to settle, once the clients stopped. */
    static final Duration SETTLE = Duration.ofMinutes(1);

    /** What the sampled file descriptors may differ by: the actuator's and JMX's connections come and go. */
    static final long FD_SLACK = 2;

    static final List<String> RDMA_KINDS = List.of("qp", "cq", "mr", "pd", "cm_id");

    /**
     * The series and their tolerances: a slope is flat when it is at most {@code perMinute}, or at
     * most {@code allowance} over the minutes of the measured window (the noise of a short run), per
     * minute.
     */
    static final List<Series> SERIES;

    static {
        List<Series> series = new ArrayList<>(List.of(
                new Series("rss", "KiB", (s) -> s.rssKiB, 1024, 4096),
                new Series("heap-after-gc", "KiB", (s) -> s.heapAfterGcKiB, 256, 1024),
                new Series("threads", "", (s) -> s.threads, 0, 2),
                new Series("fds", "", (s) -> s.fds, 0, FD_SLACK)));
        for (String kind : RDMA_KINDS) {
            series.add(new Series(kind, "", (s) -> s.rdma.get(kind), 0, 1));
        }
        SERIES = List.copyOf(series);
    }

    private E2eEnvironment environment;

    private SampleAppProcess app;

    private JMXConnector jmx;

    private MemoryMXBean memory;

    private ThreadMXBean threads;

    private List<MemoryPoolMXBean> heapPools;

    private final Traffic traffic = new Traffic();

    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());

    private final AtomicLong failureCount = new AtomicLong();

    /** Workers hold it shared for one client run; a sample takes it exclusively, so that it sees the app at rest. */
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock(true);

    private volatile boolean stopping;

    @BeforeAll
    void startTheApp() throws Exception {
        assertThat(SAMPLES).as("samples of %s min every %s s: more than the warm-up's %d and two", MINUTES,
                INTERVAL.toSeconds(), WARM_UP_INTERVALS).isGreaterThanOrEqualTo(WARM_UP_INTERVALS + 2);
        E2eEnvironment base = E2eEnvironment.get();
        int jmxPort = freePort();
        List<String> java = new ArrayList<>(base.javaCommand());
        java.addAll(List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch",
                "-Dcom.sun.management.jmxremote.port=" + jmxPort, "-Dcom.sun.management.jmxremote.rmi.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.host=127.0.0.1", "-Djava.rmi.server.hostname=127.0.0.1",
                "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false"));
        this.environment = new E2eEnvironment(base.sampleJar(), List.copyOf(java), base.logDirectory(), base.cClients());
        long start = System.nanoTime();
        this.app = SampleAppProcess.start(this.environment, "sample-app-soak", Duration.ofMinutes(8),
                "--rpma.server.address=" + serverAddress(), "--rpma.server.shutdown.grace-period=5s",
                "--rpma.server.endpoints.read.limits.idle-timeout=" + IDLE_TIMEOUT_SECONDS + "s");
        record(String.format(Locale.ROOT, "app started in %.1f s; soak of %s min, a sample every %d s, warm-up %d"
                + " samples", (System.nanoTime() - start) / 1e9, MINUTES, INTERVAL.toSeconds(), WARM_UP_INTERVALS));
        connectJmx(jmxPort);
    }

    @AfterAll
    void stopTheApp() throws Exception {
        if (this.jmx != null) {
            this.jmx.close();
        }
        if (this.app != null) {
            this.app.close();
        }
    }

    @Test
    void mixedTrafficLeavesMemoryThreadsFileDescriptorsAndRdmaObjectsFlat() throws Exception {
        List<Thread> workers = List.of(worker("connect", this::connect), worker("pingpong-1", this::pingPong),
                worker("pingpong-2", this::pingPong), worker("reject", this::reject), worker("silent", this::silent),
                worker("killed", this::killed));
        List<Sample> samples = new ArrayList<>();
        record(Sample.HEADER);
        AppNumbers numbersBefore = AppNumbers.read(this.app);
        long t0 = System.nanoTime();
        closeGate();
        try {
            samples.add(sample(t0, null));
        }
        finally {
            this.gate.writeLock().unlock();
        }
        workers.forEach(Thread::start);
        for (int i = 1; i <= SAMPLES; i++) {
            long due = t0 + i * INTERVAL.toNanos();
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            if (i == SAMPLES) {
                this.stopping = true;
            }
            closeGate();
            try {
                samples.add(sample(t0, i == SAMPLES ? samples.get(WARM_UP_INTERVALS) : null));
            }
            finally {
                this.gate.writeLock().unlock();
            }
        }
        for (Thread worker : workers) {
            worker.join(CLIENT_TIMEOUT.toMillis());
            assertThat(worker.isAlive()).as(worker.getName() + " still runs").isFalse();
        }

        List<Sample> window = samples.subList(WARM_UP_INTERVALS, samples.size());
        double windowMinutes = window.get(window.size() - 1).minute - window.get(0).minute;
        List<String> growing = new ArrayList<>();
        for (Series series : SERIES) {
            double slope = slope(window, series.value);
            double tolerance = Math.max(series.perMinute, series.allowance / windowMinutes);
            // a pool that lets idle threads go shrinks a series; only growth is a leak
            String verdict = slope > tolerance ? "GROWS" : slope < -tolerance ? "shrinks" : "flat";
            record(String.format(Locale.ROOT, "slope %-13s %+10.2f %s/min (tolerance %.2f, samples %d-%d, %.1f min):"
                    + " %s", series.name, slope, series.unit, tolerance, WARM_UP_INTERVALS, samples.size() - 1,
                    windowMinutes, verdict));
            if (slope > tolerance) {
                growing.add(series.name);
            }
        }
        Traffic.Counts done = samples.get(samples.size() - 1).traffic;
        double minutes = samples.get(samples.size() - 1).minute;
        record(String.format(Locale.ROOT, "traffic in %.1f min: %d connections (%.0f a minute), %d ping-pong rounds,"
                + " %d rejected requests, %d silent connections, %d killed clients; %d failures", minutes,
                done.connections(), done.connections() / minutes, done.rounds(), done.rejects(), done.silent(),
                done.killed(), this.failureCount.get()));
        List<String> problems = problems(this.app.log());
        record("the app's log: " + problems.size() + " WARN or ERROR lines"
                + problems.stream().limit(5).map((line) -> " | " + line).reduce("", String::concat));

        assertThat(this.failures).as("clients that did not end as they should (%d in all)", this.failureCount.get())
            .isEmpty();
        assertThat(done.connections()).as("connections made").isPositive();
        assertThat(done.killed()).as("clients killed").isPositive();
        assertThat(done.silent()).as("silent connections").isPositive();
        Map<String, Long> changes = AppNumbers.read(this.app).changesSince(numbersBefore);
        assertThat(changes).as("the app's counters over the soak")
            .containsEntry("rpma default accepted", done.hello())
            .containsEntry("rpma default rejected handler", done.rejects())
            .containsEntry("rpma read accepted", done.read() + done.silent())
            .containsEntry("rpma read ended idle", done.silent())
            .containsEntry("rpma pingpong accepted", done.pingPong() + done.killed());

        Sample baseline = samples.get(WARM_UP_INTERVALS);
        Sample end = samples.get(samples.size() - 1);
        assertThat(end.rdma.minus(baseline.rdma)).as("kernel RDMA objects at the end, against the first sample after"
                + " the warm-up").allSatisfy((kind, change) -> assertThat(change).as(kind).isZero());
        assertThat(end.fds).as("open file descriptors at the end, against the first sample after the warm-up")
            .isBetween(baseline.fds - FD_SLACK, baseline.fds + FD_SLACK);
        assertThat(growing).as("series that grow beyond their tolerance").isEmpty();
    }

    // ---- the traffic

    private void connect(long run) throws Exception {
        if (run % 2 == 0) {
            CClient.Result hello = CClient.run(this.environment, "hello_client", "soak-hello", CLIENT_TIMEOUT,
                    serverAddress(), String.valueOf(ExampleProtocols.HELLO_PORT), "--timeout", "60");
            expect(hello, hello.exitCode() == 0
                    && hello.output().contains("Received a message: " + ExampleProtocols.SERVER_GREETING));
            this.traffic.hello.incrementAndGet();
        }
        else {
            CClient.Result read = CClient.run(this.environment, "read_client", "soak-read", CLIENT_TIMEOUT,
                    serverAddress(), String.valueOf(ExampleProtocols.READ_PORT), "--timeout", "60");
            expect(read, read.exitCode() == 0 && read.output().contains("Read a message: " + ExampleProtocols.READ_CONTENT));
            this.traffic.read.incrementAndGet();
        }
    }

    private void pingPong(long run) throws Exception {
        long seed = run * 1000;
        CClient.Result result = CClient.run(this.environment, "pingpong_client", "soak-" + Thread.currentThread().getName(),
                CLIENT_TIMEOUT, serverAddress(), String.valueOf(ExampleProtocols.PING_PONG_PORT), String.valueOf(seed),
                String.valueOf(PING_PONG_ROUNDS), "--timeout", "60", "--quiet");
        expect(result, result.exitCode() == 0 && result.result("last") == seed + PING_PONG_ROUNDS - 1);
        this.traffic.pingPong.incrementAndGet();
        this.traffic.rounds.addAndGet(PING_PONG_ROUNDS - 1);
    }

    private void reject(long run) throws Exception {
        CClient.Result result = CClient.run(this.environment, "reject_flood", "soak-reject", CLIENT_TIMEOUT,
                serverAddress(), String.valueOf(ExampleProtocols.HELLO_PORT), String.valueOf(REJECTS_PER_RUN),
                "--timeout", "120");
        expect(result, result.exitCode() == 0 && result.output().contains("REJECTED " + REJECTS_PER_RUN + " in "));
        this.traffic.rejects.addAndGet(REJECTS_PER_RUN);
    }

    /** Connections that send nothing: the read endpoint's idle timeout ends them. */
    private void silent(long run) throws Exception {
        CClient holder = CClient.start(this.environment, "conn_holder", "soak-silent", serverAddress(),
                String.valueOf(ExampleProtocols.READ_PORT), "--count", String.valueOf(SILENT_CONNECTIONS), "--hold",
                "120", "--timeout", "60");
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (holder.isAlive() && System.nanoTime() - deadline < 0
                && holder.output().lines().filter((line) -> line.startsWith("CLOSED ")).count() < SILENT_CONNECTIONS) {
            Thread.sleep(100);
        }
        CClient.Result result = holder.terminate(CLIENT_TIMEOUT);
        expect(result, result.exitCode() == 0 && result.result("closed_by_server") == SILENT_CONNECTIONS);
        this.traffic.silent.addAndGet(SILENT_CONNECTIONS);
    }

    /** A ping-pong client killed with SIGKILL between its round trips: the kernel ends its side of the connection. */
    private void killed(long run) throws Exception {
        Path log = this.environment.logDirectory().resolve("c-clients").resolve("soak-killed.log");
        Files.createDirectories(log.getParent());
        Process client = new ProcessBuilder(this.environment.cClient("pingpong_client").toString(), serverAddress(),
                String.valueOf(ExampleProtocols.PING_PONG_PORT), String.valueOf(run), "1000000", "20000", "--timeout",
                "120").redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long deadline = System.nanoTime() + SETTLE.toNanos();
            while (client.isAlive() && System.nanoTime() - deadline < 0 && !read(log).contains("Value received")) {
                Thread.sleep(100);
            }
            Thread.sleep(ThreadLocalRandom.current().nextLong(500));
            if (!client.isAlive() || !read(log).contains("Value received")) {
                fail("the client to be killed did not play or ended on its own: " + read(log));
            }
            client.destroyForcibly();
            assertThat(client.waitFor(CLIENT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).as("killed client exits").isTrue();
            this.traffic.killed.incrementAndGet();
        }
        finally {
            client.destroyForcibly();
        }
    }

    private Thread worker(String name, Run body) {
        Thread thread = new Thread(() -> {
            for (long run = 0; !this.stopping; run++) {
                boolean failed = false;
                this.gate.readLock().lock();
                try {
                    if (this.stopping) {
                        return;
                    }
                    body.once(run);
                }
                catch (InterruptedException ex) {
                    return;
                }
                catch (Exception | AssertionError ex) {
                    failed = true;
                    if (this.failureCount.incrementAndGet() <= 20) {
                        this.failures.add(name + " run " + run + ": " + ex);
                    }
                }
                finally {
                    this.gate.readLock().unlock();
                }
                if (failed) {
                    // an app that fails every client is not flooded with them
                    try {
                        Thread.sleep(1000);
                    }
                    catch (InterruptedException ex) {
                        return;
                    }
                }
            }
        }, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void expect(CClient.Result result, boolean asExpected) {
        if (!asExpected) {
            throw new AssertionError(result.toString());
        }
    }

    @FunctionalInterface
    private interface Run {
        void once(long run) throws Exception;
    }

    // ---- the samples

    private void closeGate() throws InterruptedException {
        if (!this.gate.writeLock().tryLock(CLIENT_TIMEOUT.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS)) {
            fail("the clients running did not finish within " + CLIENT_TIMEOUT.multipliedBy(2));
        }
    }

    /**
     * The app at rest: once its sessions ended and the kernel's counts hold still (or, at the end,
     * are back at {@code settleTo}'s), within {@link #SETTLE}; what it holds then is what it kept.
     */
    private Sample sample(long t0, Sample settleTo) throws Exception {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (activeSessions() > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(100);
        }
        RdmaResources rdma = RdmaResources.snapshot();
        while (System.nanoTime() - deadline < 0) {
            Thread.sleep(500);
            RdmaResources again = RdmaResources.snapshot();
            boolean settled = settleTo == null ? again.counts().equals(rdma.counts())
                    : again.minus(settleTo.rdma).values().stream().allMatch((change) -> change == 0);
            rdma = again;
            if (settled) {
                break;
            }
        }
        this.memory.gc();
        long heapAfterGc = 0;
        for (MemoryPoolMXBean pool : this.heapPools) {
            MemoryUsage afterGc = pool.getCollectionUsage();
            heapAfterGc += afterGc == null ? 0 : afterGc.getUsed();
        }
        Sample sample = new Sample((System.nanoTime() - t0) / 60e9, this.app.residentKiB(), heapAfterGc / 1024,
                this.threads.getThreadCount(), this.app.openFileDescriptors(), rdma, this.traffic.counts());
        record(sample.row());
        return sample;
    }

    private long activeSessions() throws IOException, InterruptedException {
        var endpoints = this.app.json("/actuator/rpma").path("endpoints");
        long active = 0;
        for (String endpoint : Expected.ENDPOINTS) {
            active += endpoints.path(endpoint).path("sessions").path("active").asLong();
        }
        return active;
    }

    private void connectJmx(int port) throws Exception {
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi");
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (this.jmx == null) {
            try {
                this.jmx = JMXConnectorFactory.connect(url);
            }
            catch (IOException ex) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("no JMX connection to the app at " + url, ex);
                }
                Thread.sleep(500);
            }
        }
        MBeanServerConnection connection = this.jmx.getMBeanServerConnection();
        this.memory = ManagementFactory.newPlatformMXBeanProxy(connection, ManagementFactory.MEMORY_MXBEAN_NAME,
                MemoryMXBean.class);
        this.threads = ManagementFactory.newPlatformMXBeanProxy(connection, ManagementFactory.THREAD_MXBEAN_NAME,
                ThreadMXBean.class);
        this.heapPools = ManagementFactory.getPlatformMXBeans(connection, MemoryPoolMXBean.class).stream()
            .filter((pool) -> pool.getType() == MemoryType.HEAP).toList();
    }

    /** The least-squares slope of {@code value} over the samples' minutes, per minute. */
    static double slope(List<Sample> samples, ToDoubleFunction<Sample> value) {
        double meanX = samples.stream().mapToDouble(Sample::minute).average().orElseThrow();
        double meanY = samples.stream().mapToDouble(value).average().orElseThrow();
        double covariance = 0;
        double variance = 0;
        for (Sample sample : samples) {
            double dx = sample.minute - meanX;
            covariance += dx * (value.applyAsDouble(sample) - meanY);
            variance += dx * dx;
        }
        return covariance / variance;
    }

    /** Lines at WARN or ERROR, but librpma's own report of an empty non-blocking poll. */
    private static List<String> problems(String log) {
        return log.lines()
            .filter((line) -> (line.contains(" WARN ") || line.contains(" ERROR "))
                    && !line.contains("Resource temporarily unavailable"))
            .toList();
    }

    private void record(String measurement) {
        this.environment.record("soak", measurement);
    }

    private static String serverAddress() {
        return E2eEnvironment.address(E2eEnvironment.SERVER_IP);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            return "";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    record Series(String name, String unit, ToDoubleFunction<Sample> value, double perMinute, double allowance) {
    }

    record Sample(double minute, long rssKiB, long heapAfterGcKiB, long threads, long fds, RdmaResources rdma,
            Traffic.Counts traffic) {

        static final String HEADER = "   min    rss KiB  heap KiB  threads   fds    qp    cq    mr    pd cm_id |"
                + "  conns   rounds  rejects silent killed";

        String row() {
            return String.format(Locale.ROOT, "%6.2f %10d %9d %8d %5d %5d %5d %5d %5d %5d | %6d %8d %8d %6d %6d",
                    this.minute, this.rssKiB, this.heapAfterGcKiB, this.threads, this.fds, this.rdma.get("qp"),
                    this.rdma.get("cq"), this.rdma.get("mr"), this.rdma.get("pd"), this.rdma.get("cm_id"),
                    this.traffic.connections(), this.traffic.rounds(), this.traffic.rejects(), this.traffic.silent(),
                    this.traffic.killed());
        }
    }

    /** What the workers did so far. */
    static final class Traffic {

        final AtomicLong hello = new AtomicLong();

        final AtomicLong read = new AtomicLong();

        final AtomicLong pingPong = new AtomicLong();

        final AtomicLong rounds = new AtomicLong();

        final AtomicLong rejects = new AtomicLong();

        final AtomicLong silent = new AtomicLong();

        final AtomicLong killed = new AtomicLong();

        Counts counts() {
            return new Counts(this.hello.get(), this.read.get(), this.pingPong.get(), this.rounds.get(),
                    this.rejects.get(), this.silent.get(), this.killed.get());
        }

        record Counts(long hello, long read, long pingPong, long rounds, long rejects, long silent, long killed) {

            /** Connections established: all but the rejected requests. */
            long connections() {
                return this.hello + this.read + this.pingPong + this.silent + this.killed;
            }
        }
    }
}
