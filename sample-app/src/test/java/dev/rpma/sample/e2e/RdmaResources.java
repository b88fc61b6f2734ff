package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kernel's RDMA resource counts ({@code rdma res show}), summed over all devices: what the
 * processes on this machine hold of queue pairs, completion queues, memory regions, CM ids,
 * protection domains, contexts and shared receive queues.
 *
 * <p>Device contexts of this JVM are left out of {@code ctx}: librdmacm opens a device's context the
 * first time a process resolves an address on it and keeps it until the process exits, so the
 * test's own client adds one per device it used, whatever the app does.
 */
record RdmaResources(Map<String, Long> counts, long ownContexts) {

    /** The kinds a leak would show in (srq: the shared receive queues of an endpoint that has them). */
    static final String[] TRACKED = { "qp", "cq", "mr", "cm_id", "pd", "ctx", "srq" };

    private static final Pattern DEVICE_LINE = Pattern.compile("^\\d+: (\\S+): (.*)$");

    private static final Pattern COUNT = Pattern.compile("([a-z_]+) (\\d+)");

    private static final Pattern PID = Pattern.compile(" pid (\\d+) ");

    static RdmaResources snapshot() {
        String output = run("rdma", "res", "show");
        Map<String, Long> counts = new TreeMap<>();
        for (String line : output.split("\n")) {
            Matcher device = DEVICE_LINE.matcher(line.trim());
            if (!device.matches()) {
                continue;
            }
            Matcher count = COUNT.matcher(device.group(2));
            while (count.find()) {
                counts.merge(count.group(1), Long.parseLong(count.group(2)), Long::sum);
            }
        }
        if (counts.isEmpty()) {
            throw new IllegalStateException("'rdma res show' listed no device:\n" + output);
        }
        long ownContexts = run("rdma", "res", "show", "ctx").lines().filter(RdmaResources::isOwn).count();
        return new RdmaResources(counts, ownContexts);
    }

    /** Whether a listed object belongs to this process: its "pid" is the creating thread's id. */
    private static boolean isOwn(String line) {
        Matcher pid = PID.matcher(line);
        if (!pid.find()) {
            return false;
        }
        try {
            for (String status : Files.readAllLines(Path.of("/proc", pid.group(1), "status"))) {
                if (status.startsWith("Tgid:")) {
                    return Long.parseLong(status.substring(5).trim()) == ProcessHandle.current().pid();
                }
            }
        }
        catch (IOException | NumberFormatException ex) {
            // the thread is gone: not one of ours that still holds anything
        }
        return false;
    }

    /** The count of {@code kind}; for {@code ctx}, without this JVM's contexts. */
    long get(String kind) {
        long count = this.counts.getOrDefault(kind, 0L);
        return kind.equals("ctx") ? count - this.ownContexts : count;
    }

    /** {@code rdma res show KIND}: one line per object, with its process. */
    static String listing(String kind) {
        return run("rdma", "res", "show", kind).strip();
    }

    /** {@code this - before} for each tracked kind. */
    Map<String, Long> minus(RdmaResources before) {
        Map<String, Long> delta = new TreeMap<>();
        for (String kind : TRACKED) {
            delta.put(kind, get(kind) - before.get(kind));
        }
        return delta;
    }

    /** Runs an iproute2 command ({@code rdma}, {@code ip}) to its end; its output, or an exception saying why not. */
    static String run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
            return output;
        }
        catch (IOException ex) {
            throw new IllegalStateException("Cannot run " + String.join(" ", command) + " (iproute2)", ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
