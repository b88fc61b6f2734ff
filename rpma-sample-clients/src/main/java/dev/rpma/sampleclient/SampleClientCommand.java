package dev.rpma.sampleclient;

import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaUnavailableException;

/**
 * The command line of {@link SampleClient}:
 *
 * <pre>
 * --client=hello|read|pingpong --server=ADDRESS [--port=N] [--greeting=TEXT]
 *          [--rounds=N] [--seed=N] [--hold=DURATION] [--timeout=DURATION]
 * </pre>
 *
 * Prints what the server answered and exits with 0 on success, 2 for a usage error, 3 when the
 * server rejected the connection, 4 unreachable, 5 connection closed or lost, 6 timeout, 7 protocol
 * error, 1 anything else (e.g. no RDMA device serves the address).
 */
public final class SampleClientCommand {

    public static final int OK = 0;

    public static final int FAILED = 1;

    public static final int USAGE = 2;

    static final String USAGE_TEXT = """
            usage: --client=hello|read|pingpong --server=ADDRESS [options]
              --server=ADDRESS     IP address of the server's RDMA interface (alias --rpma.client.server)
              --port=N             default: hello %d, read %d, pingpong %d
              --greeting=TEXT      hello: the private data to send (default "%s"; the sample app
                                   rejects any other greeting)
              --rounds=N           pingpong: exchanges (default 100)
              --seed=N             pingpong: the first value (default 0)
              --hold=DURATION      pingpong: keep the connection this long before finishing (e.g. 30s)
              --timeout=DURATION   longest wait for the server (default 60s)
            exit codes: 0 ok, 1 error, 2 usage, 3 rejected, 4 unreachable, 5 connection lost,
                        6 timeout, 7 protocol error"""
            .formatted(ExampleProtocols.HELLO_PORT, ExampleProtocols.READ_PORT, ExampleProtocols.PING_PONG_PORT,
                    ExampleProtocols.CLIENT_GREETING);

    private static final Set<String> OPTIONS = Set.of("client", "server", "rpma.client.server", "port", "greeting",
            "rounds", "seed", "hold", "timeout");

    private SampleClientCommand() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Whether {@code args} ask for the client (a {@code --client=} option is present). */
    public static boolean isClientInvocation(String[] args) {
        for (String arg : args) {
            if (arg.startsWith("--client=") || arg.equals("--client")) {
                return true;
            }
        }
        return false;
    }

    /** Runs the client on librpma and returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, Rpma::get, out, err);
    }

    /** Runs the client on the librpma {@code rpma} gives (the tests' fake) and returns the exit code. */
    static int run(String[] args, Supplier<Rpma> rpmaSource, PrintStream out, PrintStream err) {
        Invocation invocation;
        try {
            invocation = Invocation.parse(args);
        }
        catch (IllegalArgumentException ex) {
            err.println("rpma-client: " + ex.getMessage());
            err.println(USAGE_TEXT);
            return USAGE;
        }
        String name = invocation.protocol;
        Rpma rpma;
        try {
            rpma = rpmaSource.get();
        }
        catch (RpmaUnavailableException ex) {
            err.println(name + ": librpma is not available: " + ex.getMessage());
            return FAILED;
        }
        String target = invocation.server + ":" + invocation.port;
        try (SampleClient client = SampleClient.open(rpma, invocation.server, invocation.timeout)) {
            switch (name) {
                case "hello" -> {
                    String reply = client.hello(invocation.port, invocation.greeting);
                    out.println("hello: connected to " + target + " with greeting \"" + invocation.greeting
                            + "\"; the server says \"" + reply + "\"");
                }
                case "read" -> {
                    String content = client.read(invocation.port);
                    out.println("read: rpma_read from " + target + " gave \"" + content + "\"");
                }
                default -> {
                    PingPongOptions options = PingPongOptions.of(invocation.seed, invocation.rounds);
                    if (!invocation.hold.isZero()) {
                        options = options.holding(invocation.hold, null, () -> {
                            out.println("pingpong: " + invocation.rounds + " rounds done; holding the connection to "
                                    + target + " for " + invocation.hold.toMillis() + " ms");
                            out.flush();
                        });
                    }
                    PingPongResult result = client.pingPong(invocation.port, options);
                    out.println("pingpong: " + result.rounds() + " rounds with " + target + ", seed " + result.seed()
                            + ", last reply " + result.lastReply() + ", mean round trip "
                            + result.meanRoundTrip().toNanos() / 1000 + " us");
                }
            }
            return OK;
        }
        catch (SampleClientException ex) {
            err.println(name + ": " + ex.failure() + ": " + ex.getMessage());
            return ex.failure().exitCode();
        }
        catch (RpmaException ex) {
            err.println(name + ": " + ex.getMessage());
            return FAILED;
        }
    }

    /** The parsed arguments. */
    static final class Invocation {

        String protocol;

        String server;

        int port;

        String greeting = ExampleProtocols.CLIENT_GREETING;

        int rounds = 100;

        long seed;

        Duration hold = Duration.ZERO;

        Duration timeout = SampleClient.DEFAULT_TIMEOUT;

        static Invocation parse(String[] args) {
            Map<String, String> options = new LinkedHashMap<>();
            for (String arg : args) {
                if (!arg.startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument '" + arg + "'");
                }
                int eq = arg.indexOf('=');
                String key = (eq < 0) ? arg.substring(2) : arg.substring(2, eq);
                if (!OPTIONS.contains(key)) {
                    throw new IllegalArgumentException("unknown option --" + key);
                }
                if (eq < 0) {
                    throw new IllegalArgumentException("--" + key + " needs a value: --" + key + "=...");
                }
                options.put(key, arg.substring(eq + 1));
            }
            Invocation invocation = new Invocation();
            invocation.protocol = options.getOrDefault("client", "").toLowerCase(Locale.ROOT);
            int defaultPort = switch (invocation.protocol) {
                case "hello" -> ExampleProtocols.HELLO_PORT;
                case "read" -> ExampleProtocols.READ_PORT;
                case "pingpong", "ping-pong" -> ExampleProtocols.PING_PONG_PORT;
                default -> throw new IllegalArgumentException("--client must be hello, read or pingpong, got '"
                        + invocation.protocol + "'");
            };
            if (invocation.protocol.equals("ping-pong")) {
                invocation.protocol = "pingpong";
            }
            invocation.server = options.getOrDefault("server", options.get("rpma.client.server"));
            if (invocation.server == null || invocation.server.isBlank()) {
                throw new IllegalArgumentException("--server=ADDRESS is required (the server's RDMA interface IP)");
            }
            invocation.port = (int) number(options, "port", defaultPort, 1, 65535);
            invocation.rounds = (int) number(options, "rounds", invocation.rounds, 0, Integer.MAX_VALUE);
            invocation.seed = number(options, "seed", 0, 0, Long.MAX_VALUE - Integer.MAX_VALUE);
            if (options.containsKey("greeting")) {
                invocation.greeting = options.get("greeting");
                if (ExampleProtocols.cString(invocation.greeting).length > RpmaConnectionRequest.MAX_CONNECT_PRIVATE_DATA) {
                    throw new IllegalArgumentException("--greeting is sent with its NUL as private data, at most "
                            + RpmaConnectionRequest.MAX_CONNECT_PRIVATE_DATA + " bytes");
                }
            }
            if (options.containsKey("hold")) {
                invocation.hold = duration("hold", options.get("hold"));
            }
            if (options.containsKey("timeout")) {
                invocation.timeout = duration("timeout", options.get("timeout"));
                if (invocation.timeout.isZero()) {
                    throw new IllegalArgumentException("--timeout must be positive");
                }
            }
            return invocation;
        }

        private static long number(Map<String, String> options, String key, long fallback, long min, long max) {
            String text = options.get(key);
            if (text == null) {
                return fallback;
            }
            long value;
            try {
                value = Long.parseLong(text.trim());
            }
            catch (NumberFormatException ex) {
                throw new IllegalArgumentException("--" + key + " must be a number, got '" + text + "'");
            }
            if (value < min || value > max) {
                throw new IllegalArgumentException("--" + key + " must be between " + min + " and " + max + ", got " + value);
            }
            return value;
        }

        /** {@code 30s}, {@code 500ms}, {@code 2m}, a number of seconds, or ISO-8601 ({@code PT30S}). */
        static Duration duration(String key, String text) {
            String value = text.trim().toLowerCase(Locale.ROOT);
            try {
                Duration duration;
                if (value.startsWith("pt")) {
                    duration = Duration.parse(value.toUpperCase(Locale.ROOT));
                }
                else if (value.endsWith("ms")) {
                    duration = Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
                }
                else if (value.endsWith("s")) {
                    duration = Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
                }
                else if (value.endsWith("m")) {
                    duration = Duration.ofMinutes(Long.parseLong(value.substring(0, value.length() - 1)));
                }
                else {
                    duration = Duration.ofSeconds(Long.parseLong(value));
                }
                if (duration.isNegative()) {
                    throw new IllegalArgumentException("--" + key + " must not be negative, got '" + text + "'");
                }
                return duration;
            }
            catch (NumberFormatException | java.time.format.DateTimeParseException ex) {
                throw new IllegalArgumentException("--" + key + " must be a duration such as 30s, 500ms or 2m, got '"
                        + text + "'");
            }
        }
    }
}
