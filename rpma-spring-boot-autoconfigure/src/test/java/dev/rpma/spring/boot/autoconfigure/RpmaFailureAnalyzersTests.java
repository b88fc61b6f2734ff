package dev.rpma.spring.boot.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.context.ApplicationContextException;

import dev.rpma.jna.Errno;
import dev.rpma.jna.RpmaError;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.RpmaUnavailableException;
import dev.rpma.spring.annotation.RpmaHandlerConfigurationException;
import dev.rpma.spring.annotation.RpmaHandlerConfigurationException.Problem;
import dev.rpma.server.RpmaListenException;

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
                    InvalidRpmaPropertyFailureAnalyzer.class, RpmaHandlerConfigurationFailureAnalyzer.class);
    }

    @Test
    void librpmaMissing() {
        RpmaUnavailableException ex = new RpmaUnavailableException(
                new UnsatisfiedLinkError("Unable to load library 'librpma.so.0': librpma.so.0: cannot open shared object file"));
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpma", "failed", ex));
        assertThat(analysis.getDescription()).contains("needs librpma").contains("librpma.so.0: cannot open shared object");
        assertThat(analysis.getAction()).contains("sudo apt-get install librpma0")
            .contains("'rpma.library'")
            .contains("'RPMA_LIBRARY'")
            .contains("rpma.server.enabled=false");
        assertThat(analysis.getCause()).isSameAs(ex);
    }

    @Test
    void noRdmaDeviceAtTheAddress() {
        RpmaListenException ex = new RpmaListenException("default", "198.18.0.1", 7204,
                provider("rpma_utils_get_ibv_context", Errno.ENODEV));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.NO_DEVICE);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpmaServer", "failed", ex));
        assertThat(analysis.getDescription()).contains("'default'").contains("198.18.0.1:7204")
            .contains("no RDMA device serves 198.18.0.1");
        assertThat(analysis.getAction()).contains("'rpma.server.address'")
            .contains("rdma link add rxe0 type rxe netdev <interface>")
            .contains("modprobe rdma_rxe")
            .contains("tools/rxe-vm");
    }

    @Test
    void noRdmaDeviceForANamedEndpointNamesItsProperty() {
        RpmaListenException ex = new RpmaListenException("replica", "198.18.0.2", 7300,
                provider("rpma_ep_listen", Errno.EADDRNOTAVAIL));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.NO_DEVICE);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(ex);
        assertThat(analysis.getAction()).contains("'rpma.server.endpoints.replica.address'");
    }

    @Test
    void portInUse() {
        RpmaListenException ex = new RpmaListenException("replica", "198.18.0.1", 7205,
                provider("rpma_ep_listen", Errno.EADDRINUSE));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.PORT_IN_USE);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(new BeanCreationException("rpmaServer", "failed", ex));
        assertThat(analysis.getDescription()).contains("'replica'").contains("198.18.0.1:7205")
            .contains("already in use");
        assertThat(analysis.getAction()).contains("198.18.0.1:7205")
            .contains("'rpma.server.endpoints.replica.port'")
            .contains("free port");
    }

    @Test
    void otherListenFailure() {
        RpmaListenException ex = new RpmaListenException("default", "198.18.0.1", 7204,
                new RpmaException("rpma_peer_new", RpmaError.NOMEM.code(), "Out of memory", 0, null));
        assertThat(ex.reason()).isEqualTo(RpmaListenException.Reason.OTHER);
        FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(ex);
        assertThat(analysis.getDescription()).contains("rpma_peer_new() failed with RPMA_E_NOMEM");
        assertThat(analysis.getAction()).contains("RDMA-capable interface").contains("dev.rpma.librpma");
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

    private static RpmaException provider(String function, int errno) {
        return new RpmaException(function, RpmaError.PROVIDER.code(), "Provider error occurred", errno, null);
    }
}
