package dev.rpma.testcontainers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import org.jspecify.annotations.Nullable;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.output.OutputFrame;
import org.testcontainers.containers.startupcheck.StartupCheckStrategy;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.DockerStatus;

/**
 * One run of one of the project's C clients of librpma's example protocols, in a container: the
 * image {@code rpma/c-clients} that {@code tools/container/build-images.sh} builds FROM scratch with
 * the programs, the libraries they load and the verbs providers. The clients speak as librpma's
 * examples 01 (connection), 02 (read) and 08 (messages ping-pong) do, so a server is shown to serve
 * clients written against librpma alone.
 *
 * <pre>{@code
 * RpmaCClientContainer.Result result = new RpmaCClientContainer()
 *     .withRdma(RdmaDevices.ofHost())
 *     .pingPong("198.18.0.1", 7206, 1, 100)
 *     .run();
 * assertThat(result.exitCode()).isZero();
 * assertThat(result.value("rounds")).isEqualTo(99);
 * }</pre>
 *
 * {@link #run()} starts the container, waits for the client to exit (within the timeout given to
 * {@link #withRunTimeout}) and removes it; a client that exits with a failure is a result too, not
 * an exception. Each program's usage is in the header of its source, {@code sample-app/src/test/c}.
 */
public class RpmaCClientContainer extends GenericContainer<RpmaCClientContainer> {

    /** The image {@code tools/container/build-images.sh c-clients} builds. */
    public static final DockerImageName DEFAULT_IMAGE = DockerImageName.parse("rpma/c-clients:latest");

    private static final Duration DEFAULT_RUN_TIMEOUT = Duration.ofMinutes(5);

    public RpmaCClientContainer() {
        this(DEFAULT_IMAGE);
    }

    public RpmaCClientContainer(DockerImageName image) {
        super(image);
        withStartupCheckStrategy(new ExitedStartupCheckStrategy().withTimeout(DEFAULT_RUN_TIMEOUT));
    }

    /** The RDMA devices, the host's network and unlimited locked memory ({@link RdmaDevices#applyTo}). */
    public RpmaCClientContainer withRdma(RdmaDevices devices) {
        return devices.applyTo(this);
    }

    /** How long {@link #run()} waits for the client to exit (default 5 minutes). */
    public RpmaCClientContainer withRunTimeout(Duration timeout) {
        return withStartupCheckStrategy(new ExitedStartupCheckStrategy().withTimeout(timeout));
    }

    /** {@code hello_client ADDR PORT}: example 01's client, prints the server's private data. */
    public RpmaCClientContainer hello(String address, int port) {
        return client("hello_client", address, port);
    }

    /** {@code read_client ADDR PORT}: example 02's client, reads the region the server describes. */
    public RpmaCClientContainer read(String address, int port) {
        return client("read_client", address, port);
    }

    /**
     * {@code pingpong_client ADDR PORT SEED ROUNDS --quiet}: example 08's client; its {@code RESULT}
     * line has {@code rounds} and {@code last}.
     */
    public RpmaCClientContainer pingPong(String address, int port, long seed, int rounds) {
        return client("pingpong_client", address, port, Long.toString(seed), Integer.toString(rounds), "--quiet");
    }

    /** Any of the programs ({@code hello_client}, {@code read_client}, {@code pingpong_client}, {@code conn_holder}, {@code bad_client}) with its arguments. */
    public RpmaCClientContainer client(String program, String address, int port, String... arguments) {
        List<String> command = new ArrayList<>(List.of(program, address, Integer.toString(port)));
        command.addAll(List.of(arguments));
        return withCommand(command.toArray(String[]::new));
    }

    /** Starts the client, waits for its exit, removes the container and returns how it ended. */
    public Result run() {
        try {
            start();
            InspectContainerResponse.ContainerState state = getDockerClient().inspectContainerCmd(getContainerId())
                .exec()
                .getState();
            Long exitCode = state.getExitCodeLong();
            return new Result(String.join(" ", getCommandParts()), (exitCode != null) ? exitCode.intValue() : -1,
                    getLogs(OutputFrame.OutputType.STDOUT, OutputFrame.OutputType.STDERR));
        }
        finally {
            stop();
        }
    }

    /**
     * How a client ended: its exit code (0 success; each program's header lists the others) and its
     * output (stdout, then stderr).
     */
    public record Result(String command, int exitCode, String output) {

        private static final Pattern RESULT = Pattern.compile("^RESULT (.*)$", Pattern.MULTILINE);

        /** The number after {@code key=} on the {@code RESULT} line. */
        public long value(String key) {
            Matcher line = RESULT.matcher(this.output);
            if (!line.find()) {
                throw new IllegalStateException(this.command + " printed no RESULT line:\n" + this.output);
            }
            Matcher value = Pattern.compile("\\b" + Pattern.quote(key) + "=(-?\\d+)").matcher(line.group(1));
            if (!value.find()) {
                throw new IllegalStateException(this.command + ": no " + key + "= in " + line.group());
            }
            return Long.parseLong(value.group(1));
        }

        @Override
        public String toString() {
            return this.command + " exited with " + this.exitCode + ":\n" + this.output;
        }
    }

    /** Started means exited, with any code: the exit code is a result, not a failed start. */
    static final class ExitedStartupCheckStrategy extends StartupCheckStrategy {

        @Override
        public StartupStatus checkStartupState(DockerClient dockerClient, String containerId) {
            @Nullable InspectContainerResponse.ContainerState state = getCurrentState(dockerClient, containerId);
            return DockerStatus.isContainerStopped(state) ? StartupStatus.SUCCESSFUL : StartupStatus.NOT_YET_KNOWN;
        }
    }
}
