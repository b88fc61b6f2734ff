package dev.rpma.sample.e2e;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The sample app's runnable jar, started as a process ({@code java -jar}) with its output in a log
 * file, and its {@code /actuator} over HTTP on 127.0.0.1.
 */
final class SampleAppProcess implements AutoCloseable {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Process process;

    private final int httpPort;

    private final Path log;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private SampleAppProcess(Process process, int httpPort, Path log) {
        this.process = process;
        this.httpPort = httpPort;
        this.log = log;
    }

    /** Starts the jar with {@code args} and waits until {@code /actuator/health} answers. */
    static SampleAppProcess start(E2eEnvironment environment, String name, Duration startTimeout, String... args)
            throws IOException, InterruptedException {
        int httpPort = freePort();
        Path log = environment.logDirectory().resolve(name + ".log");
        List<String> command = new ArrayList<>(environment.javaCommand());
        command.add("-jar");
        command.add(environment.sampleJar().toString());
        command.add("--server.port=" + httpPort);
        command.addAll(List.of(args));
        Files.writeString(log, String.join(" ", command) + "\n", StandardCharsets.UTF_8);
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
        SampleAppProcess app = new SampleAppProcess(process, httpPort, log);
        app.awaitUp(startTimeout);
        return app;
    }

    private void awaitUp(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (!this.process.isAlive()) {
                throw new AssertionError("The sample app exited with " + this.process.exitValue() + " while starting:\n"
                        + logTail(60));
            }
            try {
                HttpResponse<String> response = get("/actuator/health");
                if (response.statusCode() == 200) {
                    return;
                }
            }
            catch (IOException ex) {
                // not listening yet
            }
            Thread.sleep(250);
        }
        this.process.destroyForcibly();
        throw new AssertionError("The sample app did not answer /actuator/health within " + timeout + ":\n" + logTail(60));
    }

    long pid() {
        return this.process.pid();
    }

    boolean isAlive() {
        return this.process.isAlive();
    }

    /** The CPU time (user and system) the app has used so far, from {@code /proc/<pid>/stat}, in milliseconds. */
    long cpuMillis() throws IOException {
        String stat = Files.readString(Path.of("/proc", String.valueOf(pid()), "stat"), StandardCharsets.US_ASCII);
        // the fields after the command name, which is in parentheses and may hold spaces: utime and stime are
        // fields 14 and 15 of the whole line, in clock ticks of 10 ms (USER_HZ is 100 on Linux)
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
    }

    /** The app's resident set size ({@code VmRSS} of {@code /proc/<pid>/status}), in KiB. */
    long residentKiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid()), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.substring(6).replace("kB", "").trim());
            }
        }
        throw new IOException("no VmRSS in /proc/" + pid() + "/status");
    }

    /** The file descriptors the app has open ({@code /proc/<pid>/fd}). */
    long openFileDescriptors() throws IOException {
        try (var fds = Files.list(Path.of("/proc", String.valueOf(pid()), "fd"))) {
            return fds.count();
        }
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).GET().build();
        return this.http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** {@code GET path} as JSON; fails on a status other than 200 (and 503 for health). */
    JsonNode json(String path) throws IOException, InterruptedException {
        HttpResponse<String> response = get(path);
        if (response.statusCode() != 200 && !(path.endsWith("/health") && response.statusCode() == 503)) {
            throw new AssertionError("GET " + path + " answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body());
    }

    Prometheus prometheus() throws IOException, InterruptedException {
        HttpResponse<String> response = get("/actuator/prometheus");
        if (response.statusCode() != 200) {
            throw new AssertionError("GET /actuator/prometheus answered " + response.statusCode() + ": " + response.body());
        }
        return new Prometheus(response.body());
    }

    /** {@code POST path} with a JSON body; fails on a status other than 200. */
    String post(String path, String json) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("POST " + path + " answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    /** The HTTP port of {@code /actuator}, on 127.0.0.1. */
    int httpPort() {
        return this.httpPort;
    }

    /** {@code POST /actuator/shutdown}: Spring closes the context, the JVM exits on its own. */
    void requestShutdown() throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri("/actuator/shutdown")).timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("POST /actuator/shutdown answered " + response.statusCode() + ": " + response.body());
        }
    }

    /** SIGTERM, as a service manager stops a process. */
    void terminate() {
        this.process.destroy();
    }

    /** SIGKILL, as a crash ends a process: no graceful stop; the kernel tears its RDMA resources down. */
    void kill() {
        this.process.destroyForcibly();
    }

    /** The exit code, or {@code null} if still running after {@code timeout}. */
    Integer awaitExit(Duration timeout) throws InterruptedException {
        return this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? this.process.exitValue() : null;
    }

    String log() {
        try {
            return Files.readString(this.log, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            return "(cannot read " + this.log + ": " + ex.getMessage() + ")";
        }
    }

    String logTail(int lines) {
        String[] all = log().split("\n");
        return String.join("\n", List.of(all).subList(Math.max(0, all.length - lines), all.length));
    }

    Path logFile() {
        return this.log;
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + this.httpPort + path);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** Kills the process if a test left it running. */
    @Override
    public void close() throws InterruptedException {
        if (this.process.isAlive()) {
            this.process.destroyForcibly();
            this.process.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
