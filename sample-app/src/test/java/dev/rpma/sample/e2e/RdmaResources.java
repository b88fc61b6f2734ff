package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kernel's RDMA resource counts ({@code rdma res show}), summed over all devices: what the
 * processes on this machine hold of queue pairs, completion queues, memory regions, CM ids,
 * protection domains and contexts.
 */
record RdmaResources(Map<String, Long> counts) {

    /** The kinds a leak would show in. */
    static final String[] TRACKED = { "qp", "cq", "mr", "cm_id", "pd", "ctx" };

    private static final Pattern DEVICE_LINE = Pattern.compile("^\\d+: (\\S+): (.*)$");

    private static final Pattern COUNT = Pattern.compile("([a-z_]+) (\\d+)");

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
        return new RdmaResources(counts);
    }

    long get(String kind) {
        return this.counts.getOrDefault(kind, 0L);
    }

    /** {@code this - before} for each tracked kind. */
    Map<String, Long> minus(RdmaResources before) {
        Map<String, Long> delta = new TreeMap<>();
        for (String kind : TRACKED) {
            delta.put(kind, get(kind) - before.get(kind));
        }
        return delta;
    }

    private static String run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
            return output;
        }
        catch (IOException ex) {
            throw new IllegalStateException("Cannot run " + String.join(" ", command) + " (iproute2's rdma tool)", ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
