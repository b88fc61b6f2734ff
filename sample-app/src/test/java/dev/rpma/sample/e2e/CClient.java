package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One run of a C test client ({@code sample-app/src/test/c}, built by
 * {@code tools/e2e/build-c-clients.sh}): the programs that behave as librpma's example clients do,
 * so that the app is shown to serve clients written against librpma alone. Output (stdout and
 * stderr) goes to a log file; {@link #finish} waits for the exit code.
 */
final class CClient {

    private final String name;

    private final Process process;

    private final Path log;

    private CClient(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code program} with {@code args}; its output goes to {@code <logs>/<label>.log}. */
    static CClient start(E2eEnvironment environment, String program, String label, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(environment.cClient(program).toString());
        command.addAll(List.of(args));
        Path log = environment.logDirectory().resolve("c-clients").resolve(label + ".log");
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new CClient(label + " (" + String.join(" ", command) + ")", process, log);
    }

    /** Runs it to the end: its exit code and output. */
    static Result run(E2eEnvironment environment, String program, String label, Duration timeout, String... args)
            throws IOException, InterruptedException {
        return start(environment, program, label, args).finish(timeout);
    }

    /** Waits up to {@code timeout} for the exit (then kills it and fails). */
    Result finish(Duration timeout) throws InterruptedException {
        if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            this.process.destroyForcibly();
            throw new AssertionError(this.name + " still ran after " + timeout + "; its output:\n" + output());
        }
        return new Result(this.name, this.process.exitValue(), output());
    }

    /** SIGTERM, then the exit. */
    Result terminate(Duration timeout) throws InterruptedException {
        this.process.destroy();
        return finish(timeout);
    }

    boolean isAlive() {
        return this.process.isAlive();
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

    /** How a run ended. */
    record Result(String name, int exitCode, String output) {

        private static final Pattern RESULT = Pattern.compile("^RESULT (.*)$", Pattern.MULTILINE);

        /** The value of {@code key=} on the {@code RESULT} line. */
        long result(String key) {
            Matcher line = RESULT.matcher(this.output);
            if (!line.find()) {
                throw new AssertionError(this.name + " printed no RESULT line:\n" + this.output);
            }
            Matcher value = Pattern.compile("\\b" + key + "=(-?\\d+)").matcher(line.group(1));
            if (!value.find()) {
                throw new AssertionError(this.name + ": no " + key + "= in " + line.group());
            }
            return Long.parseLong(value.group(1));
        }

        /** Lines that start with {@code prefix}. */
        List<String> lines(String prefix) {
            return this.output.lines().filter((line) -> line.startsWith(prefix)).toList();
        }

        @Override
        public String toString() {
            return this.name + " exited with " + this.exitCode + ":\n" + this.output;
        }
    }
}
