package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the end-to-end tests run: the addresses of the soft-RoCE VM's topologies (exported by
 * {@code tools/rxe-vm}; on a machine with its own RDMA device, set them yourself), the runnable jar
 * and the JVM options for the processes the tests start.
 *
 * <ul>
 * <li>{@code RPMA_TEST_SAME_IP}: server and client on one address ({@code rxe0}, 198.18.0.1)</li>
 * <li>{@code RPMA_TEST_SERVER_IP}: the server's end of the veth pair (198.18.3.2), reached from
 * {@code RPMA_TEST_CLIENT_IP} (198.18.3.1)</li>
 * <li>system property {@code sample.jar}: the runnable jar (default
 * {@code sample-app/target/sample-app-*.jar} next to the test classes)</li>
 * <li>system property {@code sample.jvm-options}: options for the app and client JVMs, space-separated</li>
 * <li>system property {@code sample.logs}: where the processes' logs go</li>
 * <li>system property {@code sample.c-clients}: the directory of the C test clients (default
 * {@code sample-app/target/c-clients}, where {@code tools/e2e/build-c-clients.sh} puts them)</li>
 * </ul>
 */
record E2eEnvironment(Path sampleJar, List<String> javaCommand, Path logDirectory, Path cClients) {

    static final String SAME_IP = "RPMA_TEST_SAME_IP";

    static final String SERVER_IP = "RPMA_TEST_SERVER_IP";

    static final String CLIENT_IP = "RPMA_TEST_CLIENT_IP";

    static E2eEnvironment get() throws IOException {
        Path jar = Paths.get(System.getProperty("sample.jar", defaultJar()));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("The runnable jar " + jar + " is missing: build it (mvn package -pl sample-app)"
                    + " or point -Dsample.jar at it");
        }
        List<String> java = new ArrayList<>();
        java.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        String options = System.getProperty("sample.jvm-options", "").trim();
        if (!options.isEmpty()) {
            java.addAll(List.of(options.split("\\s+")));
        }
        Path logs = Paths.get(System.getProperty("sample.logs", "target/e2e-logs"));
        Files.createDirectories(logs);
        Path cClients = Paths.get(System.getProperty("sample.c-clients", defaultCClients()));
        return new E2eEnvironment(jar, List.copyOf(java), logs, cClients);
    }

    /** The C test client {@code name}, built. */
    Path cClient(String name) {
        Path program = this.cClients.resolve(name);
        if (!Files.isExecutable(program)) {
            throw new IllegalStateException("The C test client " + program + " is missing: build it with"
                    + " tools/e2e/build-c-clients.sh or point -Dsample.c-clients at its directory");
        }
        return program;
    }

    /** Prints {@code measurement} and appends it to {@code measurements.txt} in the log directory. */
    void record(String topology, String measurement) {
        String line = "[e2e " + topology + "] " + measurement;
        System.out.println(line);
        try {
            Files.writeString(this.logDirectory.resolve("measurements.txt"), line + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (IOException ex) {
            System.out.println("(cannot append to measurements.txt: " + ex.getMessage() + ")");
        }
    }

    private static String defaultCClients() {
        Path target = Paths.get("sample-app", "target");
        return (Files.isDirectory(target) ? target : Paths.get("target")).resolve("c-clients").toString();
    }

    static String address(String variable) {
        String value = System.getenv(variable);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(variable + " is not set: run the end-to-end tests with tools/e2e/run-e2e.sh");
        }
        return value.trim();
    }

    private static String defaultJar() {
        Path target = Paths.get("sample-app", "target");
        if (!Files.isDirectory(target)) {
            target = Paths.get("target");
        }
        try (var files = Files.list(target)) {
            return files.filter((f) -> f.getFileName().toString().matches("sample-app-.*\\.jar"))
                .filter((f) -> !f.getFileName().toString().endsWith("-plain.jar"))
                .findFirst().map(Path::toString).orElse(target.resolve("sample-app.jar").toString());
        }
        catch (IOException ex) {
            return target.resolve("sample-app.jar").toString();
        }
    }
}
