package dev.rpma.spring.boot.autoconfigure;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.Errno;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.internal.RpmaLibraryLoader;
import dev.rpma.binding.io.MemoryLockLimit;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.spring.annotation.RpmaHandlerConfigurationException;
import dev.rpma.spring.annotation.RpmaHandlerConfigurationException.Problem;
import dev.rpma.server.RpmaListenException;
import dev.rpma.server.RpmaMemoryLockException;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every way the starter refuses to start, through a real context over the scripted librpma fake:
 * the exception, the failure analysis Boot would print (its analyzers loaded from
 * {@code spring.factories}), and that nothing native was left behind.
 */
class RpmaStartupFailureTests {

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final ApplicationContextRunner runner = FakeRpmaServer.runnerOnDefaultPort(this.fake);

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        this.fake.assertCleanAndClose();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            rpma.server.acceptor.handler-threads=0        | rpma.server.acceptor.handler-threads          | must be at least 1
            rpma.server.acceptor.request-deadline=0       | rpma.server.acceptor.request-deadline         | must be positive
            rpma.server.port=0                            | rpma.server.port                              | between 1 and 65535
            rpma.server.address=127.0.0.1                 | rpma.server.address                           | loopback
            rpma.server.address=::1                       | rpma.server.address                           | loopback
            rpma.server.address=0.0.0.0                   | rpma.server.address                           | wildcard
            rpma.server.address=rdma-server.example.com   | rpma.server.address                           | not a host name
            rpma.server.connection.cq-size=0              | rpma.server.connection.cq-size                | must be at least 1
            rpma.server.endpoints.replica.address=::      | rpma.server.endpoints.replica.address         | wildcard
            rpma.server.endpoints.replica.acceptor.poll-interval=-1s | rpma.server.endpoints.replica.acceptor.poll-interval | must be positive
            rpma.server.endpoints.replica.connection.rq-size=-1 | rpma.server.endpoints.replica.connection.rq-size | must be at least 0
            """)
    void invalidValueFailsBeforeAnythingNative(String setting, String property, String reason) {
        this.runner.withBean(Handlers.Greeter.class)
            .withPropertyValues("rpma.server.endpoints.replica.port=7205", setting)
            .run((context) -> {
                assertThat(rootCause(context)).isInstanceOfSatisfying(InvalidRpmaPropertyException.class,
                        (ex) -> assertThat(ex.property()).isEqualTo(property));
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                assertThat(analysis.getDescription()).contains("'" + property + "'").contains(reason);
                if (property.endsWith(".address")) {
                    assertThat(analysis.getAction())
                        .startsWith("Set '" + property + "' to the IP address of an RDMA-capable interface");
                }
                else {
                    assertThat(analysis.getAction())
                        .isEqualTo("Update '" + property + "' in your application's configuration.");
                }
                assertThat(this.fake.totalCalls()).isZero();
            });
    }

    /** Boot leaves a placeholder it cannot resolve in the value; it is not a host name. */
    @Test
    void unresolvedPlaceholderInTheAddress() {
        this.runner.withBean(Handlers.Greeter.class)
            .withPropertyValues("rpma.server.address=${RPMA_TEST_UNDEFINED_ADDRESS}")
            .run((context) -> {
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                assertThat(analysis.getDescription()).isEqualTo("Property 'rpma.server.address' has the invalid value"
                        + " '${RPMA_TEST_UNDEFINED_ADDRESS}': contains the placeholder '${RPMA_TEST_UNDEFINED_ADDRESS}',"
                        + " which is not defined");
                assertThat(analysis.getAction()).isEqualTo("Define 'RPMA_TEST_UNDEFINED_ADDRESS' (as an environment"
                        + " variable, a system property or a property of the application), or set 'rpma.server.address'"
                        + " to the IP address itself.");
                assertThat(this.fake.totalCalls()).isZero();
            });
    }

    @Test
    void aDefinedPlaceholderIsResolvedBeforeTheCheck() {
        this.runner.withBean(Handlers.Greeter.class)
            .withPropertyValues("rdma.ip=198.18.0.7", "rpma.server.address=${rdma.ip}")
            .run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void addressIsRequired() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
            .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake))
            .run((context) -> {
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                assertThat(analysis.getDescription()).isEqualTo("Property 'rpma.server.address' is required");
                assertThat(analysis.getAction()).startsWith("Set 'rpma.server.address' to the IP address of an"
                        + " RDMA-capable interface");
                assertThat(this.fake.totalCalls()).isZero();
            });
    }

    @Test
    void noRdmaDeviceAtTheAddress() {
        this.fake.failNext("rpma_utils_get_ibv_context", RpmaError.PROVIDER.code(), Errno.ENODEV);
        this.runner.withBean(Handlers.Greeter.class).run((context) -> {
            assertThat(rootCause(context)).isInstanceOf(dev.rpma.binding.RpmaException.class);
            RpmaListenException ex = listenFailure(context);
            assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.NO_DEVICE);
            FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
            // the exception carries the binding's hint; the analysis gives it once, in the action
            assertThat(ex).hasMessageContaining("soft-RoCE");
            assertThat(analysis.getDescription()).isEqualTo("RDMA endpoint 'default' could not listen: no RDMA device"
                    + " serves 198.18.0.1 (rpma_utils_get_ibv_context() failed with RPMA_E_PROVIDER (-100002): Provider"
                    + " error occurred; errno 19 (ENODEV)).");
            assertThat(analysis.getAction()).contains("'rpma.server.address'")
                .containsOnlyOnce("soft-RoCE")
                .contains("rdma link add rxe0 type rxe netdev <interface>")
                .doesNotContain("tools/");
            assertThat(this.fake.calls("rpma_ep_listen")).isZero();
        });
    }

    @Test
    void noRdmaDeviceForTheSecondAddressListensNowhereAndDeletesTheFirstPeer() {
        // the peers are opened first, one per address: the second address has no device
        this.fake.failAfter("rpma_utils_get_ibv_context", 1, RpmaError.PROVIDER.code(), Errno.ENODEV);
        this.runner.withBean(Handlers.Greeter.class).withBean(Handlers.Replica.class)
            .withPropertyValues("rpma.server.endpoints.replica.address=198.18.0.2",
                    "rpma.server.endpoints.replica.port=7205")
            .run((context) -> {
                RpmaListenException ex = listenFailure(context);
                assertThat(ex.endpointName()).isEqualTo("replica");
                assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.NO_DEVICE);
                assertThat(RpmaFailureAnalyzers.analyze(context.getStartupFailure()).getAction())
                    .contains("'rpma.server.endpoints.replica.address'");
                // every peer is opened before anything listens
                assertThat(this.fake.calls("rpma_ep_listen")).isZero();
                assertThat(this.fake.calls("rpma_peer_delete")).isOne();
                assertThat(this.fake.liveHandles()).isEmpty();
            });
    }

    @Test
    void portInUseOnTheSecondEndpointReleasesTheFirst() {
        this.fake.failAfter("rpma_ep_listen", 1, RpmaError.PROVIDER.code(), Errno.EADDRINUSE);
        this.runner.withBean(Handlers.Greeter.class).withBean(Handlers.Replica.class)
            .withPropertyValues("rpma.server.endpoints.replica.port=7205")
            .run((context) -> {
                RpmaListenException ex = listenFailure(context);
                assertThat(ex.endpointName()).isEqualTo("replica");
                assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.PORT_IN_USE);
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                assertThat(analysis.getDescription())
                    .startsWith("RDMA endpoint 'replica' could not listen: port 7205 on 198.18.0.1 is in use (");
                assertThat(analysis.getAction()).contains("198.18.0.1:7205")
                    .containsOnlyOnce("choose another port")
                    .endsWith("The endpoint's port is set by 'rpma.server.endpoints.replica.port'.");
                assertFirstEndpointReleased();
            });
    }

    /** With the limit scripted: the analysis Boot prints, and not one librpma call before it. */
    @Test
    void memoryLockLimitTooSmallForTheRegions() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
            .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake, MemoryLockLimit.of(64 * 1024)))
            .withBean(Handlers.Greeter.class)
            .withPropertyValues("rpma.server.address=198.18.0.1", "rpma.server.regions.catalog.size=1MB")
            .run((context) -> {
                assertThat(rootCause(context)).isInstanceOf(RpmaMemoryLockException.class);
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                assertThat(analysis.getDescription()).isEqualTo("The RDMA server registers 1.0 MiB of memory when"
                        + " it starts (region 'catalog' on the peer of 198.18.0.1 1.0 MiB), which the kernel pins, but"
                        + " this process may lock only 64 KiB (RLIMIT_MEMLOCK).");
                assertThat(analysis.getAction()).contains("at least 1.0 MiB (1028 KiB)", "'ulimit -l 1028'");
                assertThat(this.fake.totalCalls()).isZero();
            });
    }

    @Test
    void endpointWithoutHandler() {
        this.runner.withBean(Handlers.Greeter.class).withPropertyValues("rpma.server.endpoints.replica.port=7205")
            .run((context) -> {
                RpmaHandlerConfigurationException ex = handlerFailure(context, Problem.NO_HANDLER);
                assertThat(ex.endpoint()).isEqualTo("replica");
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                assertThat(analysis.getDescription()).contains("RDMA endpoint 'replica' has no @RpmaConnectionHandler");
                assertThat(analysis.getAction()).contains("@RpmaConnectionHandler(endpoint = \"replica\")");
                assertNeverAccepted();
            });
    }

    @Test
    void defaultEndpointWithoutHandler() {
        this.runner.run((context) -> {
            handlerFailure(context, Problem.NO_HANDLER);
            assertThat(RpmaFailureAnalyzers.analyze(context.getStartupFailure()).getAction())
                .contains("'rpma.server.enabled=false'");
            assertNeverAccepted();
        });
    }

    @Test
    void twoHandlersForOneEndpoint() {
        this.runner.withBean(Handlers.Greeter.class).withBean(Handlers.OtherGreeter.class).run((context) -> {
            RpmaHandlerConfigurationException ex = handlerFailure(context, Problem.CONFLICTING_HANDLERS);
            assertThat(ex).hasMessageContaining("Greeter.hello").hasMessageContaining("OtherGreeter.hi");
            assertThat(RpmaFailureAnalyzers.analyze(context.getStartupFailure()).getAction())
                .contains("Keep @RpmaConnectionHandler on one of these methods only");
            assertNeverAccepted();
        });
    }

    @Test
    void handlerNamingAnUnconfiguredEndpoint() {
        this.runner.withBean(Handlers.Greeter.class).withBean(Handlers.Stray.class).run((context) -> {
            RpmaHandlerConfigurationException ex = handlerFailure(context, Problem.UNKNOWN_ENDPOINT);
            assertThat(ex).hasMessageContaining("Stray.stray").hasMessageContaining("'replcia'");
            assertThat(RpmaFailureAnalyzers.analyze(context.getStartupFailure()).getAction())
                .contains("'rpma.server.endpoints.replcia'");
            assertNeverAccepted();
        });
    }

    @Test
    void aWiringMistakeIsReportedAsItselfOnAMachineWithoutADevice() {
        this.fake.failNext("rpma_utils_get_ibv_context", RpmaError.PROVIDER.code(), Errno.ENODEV);
        this.runner.withBean(Handlers.Greeter.class).withBean(Handlers.Stray.class).run((context) -> {
            handlerFailure(context, Problem.UNKNOWN_ENDPOINT);
            assertThat(this.fake.calls("rpma_utils_get_ibv_context")).as("checked before the device is looked for")
                .isZero();
        });
    }

    /**
     * Without librpma the auto-configured {@code Rpma} bean fails. librpma is bound once per JVM (and is
     * installed here), so this runs in a child JVM pointed at a library that does not exist.
     */
    @Test
    void librpmaMissing() throws IOException, InterruptedException {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        ProcessBuilder builder = new ProcessBuilder(java, "-D" + RpmaLibraryLoader.PROPERTY + "=/nonexistent/librpma.so.0",
                "-cp", System.getProperty("java.class.path"), LibrpmaMissingApplication.class.getName())
            .redirectErrorStream(true);
        builder.environment().remove(RpmaLibraryLoader.ENVIRONMENT);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains(LibrpmaMissingApplication.FAILURE + "dev.rpma.binding.RpmaUnavailableException");
        assertThat(line(output, LibrpmaMissingApplication.DESCRIPTION))
            .startsWith("The RDMA server needs librpma, which could not be loaded. Tried '/nonexistent/librpma.so.0'")
            .contains("/nonexistent/librpma.so.0: cannot open shared object file")
            .doesNotContain("apt-get");
        assertThat(line(output, LibrpmaMissingApplication.ACTION)).contains("sudo apt-get install librpma0")
            .contains("rpma.server.enabled=false");
    }

    /** The rest of the output's line that starts with {@code prefix}. */
    private static String line(String output, String prefix) {
        return output.lines()
            .filter((line) -> line.startsWith(prefix))
            .map((line) -> line.substring(prefix.length()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no line " + prefix + " in " + output));
    }

    private void assertFirstEndpointReleased() {
        FakeEndpoint first = this.fake.endpointAt("198.18.0.1", 7204);
        assertThat(first.isShutDown()).isTrue();
        // never started, so the thread that created it released it
        assertThat(first.shutDownOnThread()).isEqualTo(Thread.currentThread().getName());
        assertThat(this.fake.calls("rpma_peer_delete")).isOne();
        assertThat(this.fake.calls("rpma_conn_cfg_delete")).isEqualTo(this.fake.calls("rpma_conn_cfg_new"));
        assertThat(this.fake.liveHandles()).isEmpty();
        assertNeverAccepted();
    }

    private void assertNeverAccepted() {
        assertThat(this.fake.calls("rpma_ep_next_conn_req")).isZero();
        assertThat(this.fake.endpoints()).allSatisfy((endpoint) -> assertThat(endpoint.isShutDown()).isTrue());
    }

    private static RpmaListenException listenFailure(AssertableApplicationContext context) {
        Throwable failure = context.getStartupFailure();
        assertThat(failure).isNotNull();
        while (failure != null && !(failure instanceof RpmaListenException)) {
            failure = failure.getCause();
        }
        assertThat(failure).isInstanceOf(RpmaListenException.class);
        return (RpmaListenException) failure;
    }

    private static RpmaHandlerConfigurationException handlerFailure(AssertableApplicationContext context,
            Problem problem) {
        Throwable root = rootCause(context);
        assertThat(root).isInstanceOf(RpmaHandlerConfigurationException.class);
        RpmaHandlerConfigurationException ex = (RpmaHandlerConfigurationException) root;
        assertThat(ex.problem()).isEqualTo(problem);
        return ex;
    }

    private static Throwable rootCause(AssertableApplicationContext context) {
        Throwable failure = context.getStartupFailure();
        assertThat(failure).as("startup failure").isNotNull();
        while (failure.getCause() != null) {
            failure = failure.getCause();
        }
        return failure;
    }
}
