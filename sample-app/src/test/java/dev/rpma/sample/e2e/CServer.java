package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One run of a C test server ({@code hello_server}, {@code read_server}, {@code pingpong_server} in
 * {@code sample-app/src/test/c}, built by {@code tools/e2e/build-c-clients.sh}): programs written
 * against librpma alone that behave as librpma's example servers do, each serving one connection.
 * {@link #start} returns once it listens; output (stdout and stderr) goes to a log file.
 */
final class CServer {

    private final String name;

    private final Process process;

    private final Path log;

    private CServer(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code program} with {@code args} (output to {@code <logs>/c-servers/<label>.log}) and
     * waits up to {@code timeout} for its {@code Listening on} line.
     */
    static CServer start(E2eEnvironment environment, String program, String label, Duration timeout, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(environment.cClient(program).toString());
        command.addAll(List.of(args));
        Path log = environment.logDirectory().resolve("c-servers").resolve(label + ".log");
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        CServer server = new CServer(label + " (" + String.join(" ", command) + ")", process, log);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!server.output().contains("Listening on ")) {
            if (!process.isAlive() || System.nanoTime() - deadline > 0) {
                process.destroyForcibly();
                throw new AssertionError(server.name + " did not listen within " + timeout + "; its output:\n"
                        + server.output());
            }
            Thread.sleep(50);
        }
        return server;
    }

    /** Waits up to {@code timeout} for the exit (then kills it and fails). */
    CClient.Result finish(Duration timeout) throws InterruptedException {
        if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            this.process.destroyForcibly();
            throw new AssertionError(this.name + " still ran after " + timeout + "; its output:\n" + output());
        }
        return new CClient.Result(this.name, this.process.exitValue(), output());
    }

    /** Kills it if a test left it running. */
    void kill() {
        this.process.destroyForcibly();
    }

    /** The output so far. */
    String output() {
        try {
            return Files.readString(this.log, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            return "";
        }
    }
}
