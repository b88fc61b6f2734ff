package dev.rpma.spring.boot.autoconfigure;

import java.util.List;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.context.ApplicationContextException;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaFailureKind;
import dev.rpma.binding.RpmaUnavailableException;
import dev.rpma.binding.internal.RpmaLibraryLoader;
import dev.rpma.binding.io.MemoryLockLimit;
import dev.rpma.spring.annotation.RpmaHandlerConfigurationException;
import dev.rpma.spring.annotation.RpmaHandlerConfigurationException.Problem;
import dev.rpma.server.RpmaBackingStore;
import dev.rpma.server.RpmaListenException;
import dev.rpma.server.RpmaMemoryLockException;
import dev.rpma.server.RpmaRegionStoreException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each failure analyzer, fed with the exception the starter throws (wrapped as Spring wraps it), spells
 * out the fix; all are registered in {@code META-INF/spring.factories}.
 */
class RpmaFailureAnalyzersTests {

    @Test
    void allAnalyzersAreRegistered() {
        assertThat(RpmaFailureAnalyzers.registered()).extracting((FailureAnalyzer analyzer) -> (Object) analyzer.getClass())
            .containsExactlyInAnyOrder(RpmaUnavailableFailureAnalyzer.class, RpmaListenFailureAnalyzer.class,
                    InvalidRpmaPropertyFailureAnalyzer.class, RpmaHandlerConfigurationFailureAnalyzer.class,
                    RpmaMemoryLockFailureAnalyzer.class, RpmaRegionStoreFailureAnalyzer.class);
    }

    @Test
    void daxMemoryTheDeviceCannotRegister() {
        RpmaRegionStoreException ex = new RpmaRegionStoreException(Path.of("/mnt/pm/log"), RpmaBackingStore.Kind.DAX,
                "the RDMA device of 198.18.0.1 cannot register file system DAX memory",
                provider("rpma_mr_reg", Errno.EOPNOTSUPP, "198.18.0.1", 0));
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpmaServer", "failed", ex));
        assertThat(analysis.getDescription()).isEqualTo("The dax region in /mnt/pm/log cannot be used: the RDMA device of"
                + " 198.18.0.1 cannot register file system DAX memory.");
        assertThat(analysis.getAction()).contains("on-demand paging", "'rpma.server.regions.<name>.store=file'");
    }

    /** A real failed load: the loader's whole error in the description, the advice once, in the action. */
    @Test
    void librpmaMissing() {
        RpmaUnavailableException ex = new RpmaUnavailableException(failedLoad("/nonexistent/librpma.so.0"));
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpma", "failed", ex));
        assertThat(analysis.getDescription()).startsWith("The RDMA server needs librpma, which could not be loaded."
                + " Tried '/nonexistent/librpma.so.0' (system property rpma.library): Unable to load library"
                + " '/nonexistent/librpma.so.0': /nonexistent/librpma.so.0: cannot open shared object file:"
                + " No such file or directory")
            .doesNotContain("\n")
            .doesNotContain("apt-get");
        assertThat(analysis.getAction()).contains("sudo apt-get install librpma0")
            .contains("'rpma.library'")
            .contains("'RPMA_LIBRARY'")
            .contains("rpma.server.enabled=false")
            .containsOnlyOnce("apt-get");
        assertThat(analysis.getCause()).isSameAs(ex);
    }

    @Test
    void noRdmaDeviceAtTheAddress() {
        RpmaListenException ex = new RpmaListenException("default", "198.18.0.1", 7204,
                provider("rpma_utils_get_ibv_context", Errno.ENODEV, "198.18.0.1", 0));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.NO_DEVICE);
        assertThat(ex).hasMessageContaining("soft-RoCE");
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpmaServer", "failed", ex));
        assertThat(analysis.getDescription()).isEqualTo("RDMA endpoint 'default' could not listen: no RDMA device serves"
                + " 198.18.0.1 (rpma_utils_get_ibv_context() failed with RPMA_E_PROVIDER (-100002): Provider error"
                + " occurred; errno 19 (ENODEV)).");
        assertThat(analysis.getAction()).contains("127.0.0.1 never works")
            .contains("rdma link add rxe0 type rxe netdev <interface>")
            .contains("modprobe rdma_rxe")
            .containsOnlyOnce("soft-RoCE")
            .doesNotContain("tools/")
            .endsWith(" The endpoint's address is set by 'rpma.server.address'.");
    }

    @Test
    void addressOfNoInterfaceForANamedEndpointNamesItsProperty() {
        RpmaListenException ex = new RpmaListenException("replica", "198.18.0.2", 7300,
                provider("rpma_ep_listen", Errno.EADDRNOTAVAIL, "198.18.0.2", 7300));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.NO_DEVICE);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(ex);
        assertThat(analysis.getDescription()).startsWith("RDMA endpoint 'replica' could not listen: no interface of this"
                + " machine has the address 198.18.0.2 (rpma_ep_listen() failed");
        assertThat(analysis.getAction()).contains("'rdma link show'")
            .endsWith(" The endpoint's address is set by 'rpma.server.endpoints.replica.address'.");
    }

    @Test
    void portInUse() {
        RpmaListenException ex = new RpmaListenException("replica", "198.18.0.1", 7205,
                provider("rpma_ep_listen", Errno.EADDRINUSE, "198.18.0.1", 7205));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.PORT_IN_USE);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpmaServer", "failed", ex));
        assertThat(analysis.getDescription()).isEqualTo("RDMA endpoint 'replica' could not listen: port 7205 on"
                + " 198.18.0.1 is in use (rpma_ep_listen() failed with RPMA_E_PROVIDER (-100002): Provider error"
                + " occurred; errno 98 (EADDRINUSE)).");
        assertThat(analysis.getAction()).isEqualTo("Stop the other process that listens on 198.18.0.1:7205, or choose"
                + " another port. The endpoint's port is set by 'rpma.server.endpoints.replica.port'.");
    }

    @Test
    void otherListenFailure() {
        RpmaListenException ex = new RpmaListenException("default", "198.18.0.1", 7204,
                new RpmaException("rpma_peer_new", RpmaError.NOMEM.code(), "Out of memory", 0, null));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.OTHER);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(ex);
        assertThat(analysis.getDescription()).isEqualTo("RDMA endpoint 'default' could not listen on 198.18.0.1:7204:"
                + " rpma_peer_new() failed with RPMA_E_NOMEM (-100003): Out of memory");
        assertThat(analysis.getAction()).contains("RDMA-capable interface").contains("dev.rpma.librpma");
    }

    /** Names the limit, what needs how much, the amount to raise it to in the units ulimit takes, and every place. */
    @Test
    void memoryLockLimitTooSmall() {
        RpmaMemoryLockException ex = new RpmaMemoryLockException(new MemoryLockLimit(65536, 131072, false, 4096),
                2 * 1024 * 1024 + 1, List.of("region 'catalog' on the peer of 198.18.0.1 2.0 MiB"), null);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpmaServer", "failed", ex));
        assertThat(analysis.getDescription()).isEqualTo("The RDMA server registers 2.0 MiB of memory when it starts"
                + " (region 'catalog' on the peer of 198.18.0.1 2.0 MiB), which the kernel pins, but this process may"
                + " lock only 64 KiB (RLIMIT_MEMLOCK; its hard limit is 128 KiB).");
        assertThat(analysis.getAction()).startsWith("Raise the memory-lock limit of the process to at least 2.0 MiB"
                + " (2049 KiB), or make it unlimited")
            .contains("'ulimit -l unlimited' (or 'ulimit -l 2049')", "'docker run --ulimit memlock=-1:-1'",
                    "'LimitMEMLOCK=infinity'", "Kubernetes", "IPC_LOCK", "'rpma.server.regions.<name>.size'",
                    "'rpma.server.messages.max-message-size'");
        assertThat(analysis.getCause()).isSameAs(ex);
    }

    @Test
    void memoryLockLimitFoundByAFailedRegistration() {
        RpmaException enomem = provider("rpma_mr_reg", Errno.ENOMEM, "198.18.0.1", 0);
        RpmaMemoryLockException ex = new RpmaMemoryLockException(MemoryLockLimit.of(8 << 20), 4096,
                List.of("region 'catalog' on the peer of 198.18.0.1 4 KiB"), enomem);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(ex);
        assertThat(analysis.getDescription()).endsWith("but this process may lock only 8 MiB (RLIMIT_MEMLOCK):"
                + " rpma_mr_reg() failed with RPMA_E_PROVIDER (-100002): Provider error occurred; errno 12 (ENOMEM).");
    }

    @Test
    void invalidPropertyWithItsOwnAction() {
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new InvalidRpmaPropertyException("rpma.server.address",
                "${RDMA_IP}", "contains the placeholder '${RDMA_IP}', which is not defined", "Define 'RDMA_IP'"));
        assertThat(analysis.getDescription()).isEqualTo("Property 'rpma.server.address' has the invalid value"
                + " '${RDMA_IP}': contains the placeholder '${RDMA_IP}', which is not defined");
        assertThat(analysis.getAction()).isEqualTo("Define 'RDMA_IP'.");
    }

    @Test
    void invalidProperty() {
        InvalidRpmaPropertyException ex = new InvalidRpmaPropertyException("rpma.server.acceptor.handler-threads", 0,
                "must be at least 1");
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpmaServer", "failed", ex));
        assertThat(analysis.getDescription())
            .isEqualTo("Property 'rpma.server.acceptor.handler-threads' has the invalid value '0': must be at least 1");
        assertThat(analysis.getAction())
            .isEqualTo("Update 'rpma.server.acceptor.handler-threads' in your application's configuration.");
    }

    @Test
    void missingPropertyHasNoValueInTheDescription() {
        FailureAnalysis analysis = RpmaFailureAnalyzers
            .analyze(new InvalidRpmaPropertyException("rpma.server.address", null, "is required"));
        assertThat(analysis.getDescription()).isEqualTo("Property 'rpma.server.address' is required");
    }

    @Test
    void namedEndpointWithoutHandler() {
        RpmaHandlerConfigurationException ex = new RpmaHandlerConfigurationException(
                "RDMA endpoint 'replica' has no @RpmaConnectionHandler method, so every request to it would be rejected",
                "replica", Problem.NO_HANDLER);
        FailureAnalysis analysis = RpmaFailureAnalyzers
            .analyze(new ApplicationContextException("Failed to start bean 'rpmaServerLifecycle'", ex));
        assertThat(analysis.getDescription()).isEqualTo(ex.getMessage());
        assertThat(analysis.getAction()).contains("one bean method that takes an RpmaIncomingRequest")
            .contains("@RpmaConnectionHandler(endpoint = \"replica\")")
            .contains("remove the endpoint's configuration 'rpma.server.endpoints.replica'");
    }

    @Test
    void defaultEndpointWithoutHandler() {
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(
                new RpmaHandlerConfigurationException("no handler", "default", Problem.NO_HANDLER));
        // the default endpoint is configured under rpma.server; endpoints.default is refused
        assertThat(analysis.getAction()).contains("with @RpmaConnectionHandler,")
            .contains("'rpma.server.enabled=false'")
            .doesNotContain("rpma.server.endpoints.default")
            .doesNotContain("endpoint = \"default\"");
    }

    @Test
    void conflictingHandlers() {
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new RpmaHandlerConfigurationException(
                "RDMA endpoint 'replica' has 2 @RpmaConnectionHandler methods: A.a, B.b", "replica",
                Problem.CONFLICTING_HANDLERS));
        assertThat(analysis.getDescription()).contains("A.a, B.b");
        assertThat(analysis.getAction()).contains("Keep @RpmaConnectionHandler(endpoint = \"replica\") on one of these")
            .contains("other endpoints");
    }

    @Test
    void handlerNamingAnUnknownEndpoint() {
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new RpmaHandlerConfigurationException(
                "names endpoint 'replcia', which is not configured", "replcia", Problem.UNKNOWN_ENDPOINT));
        assertThat(analysis.getAction()).contains("under 'rpma.server.endpoints.replcia' (at least its port)")
            .contains("correct the endpoint name");
    }

    @Test
    void handlerWithAnInvalidSignature() {
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("greeter", "failed",
                new RpmaHandlerConfigurationException("has a parameter of type int", "default",
                        Problem.INVALID_SIGNATURE)));
        assertThat(analysis.getAction())
            .contains("a connection handler takes an RpmaIncomingRequest (and optionally a String, the endpoint name)")
            .contains("a message handler takes the message (ByteBuffer, byte[] or a decoded type)")
            .contains("a session event method takes the RpmaSession");
    }

    @Test
    void classAnnotatedWithoutAnnotatedMethods() {
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("greeter", "failed",
                new RpmaHandlerConfigurationException("none of its methods is", "default", Problem.NO_HANDLER_METHOD)));
        assertThat(analysis.getAction()).contains("Annotate the handler methods of the class too")
            .contains("only sets the endpoint");
    }

    /** As the binding makes it: with the hint of its kind. */
    private static RpmaException provider(String function, int errno, String address, int port) {
        int code = RpmaError.PROVIDER.code();
        return new RpmaException(function, code, "Provider error occurred", errno,
                RpmaFailureKind.classify(function, code, errno).hint(address, port));
    }

    /** The loader's failure for a library that does not exist. */
    private static UnsatisfiedLinkError failedLoad(String library) {
        String saved = System.getProperty(RpmaLibraryLoader.PROPERTY);
        System.setProperty(RpmaLibraryLoader.PROPERTY, library);
        try {
            RpmaLibraryLoader.load();
            throw new AssertionError(library + " was loaded");
        }
        catch (RpmaLibraryLoader.LoadFailure ex) {
            return ex;
        }
        finally {
            if (saved == null) {
                System.clearProperty(RpmaLibraryLoader.PROPERTY);
            }
            else {
                System.setProperty(RpmaLibraryLoader.PROPERTY, saved);
            }
        }
    }
}
