package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaFailureKind;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaListenException;

/**
 * An endpoint could not listen: no RDMA device at its address, port in use, or another librpma error.
 * The description says what is wrong with librpma's diagnostic, the action what to do and which
 * property to change; the hint in the exception's own message is the same advice, so it is left out.
 */
class RpmaListenFailureAnalyzer extends AbstractFailureAnalyzer<RpmaListenException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaListenException cause) {
        String endpoint = "RDMA endpoint '" + cause.endpointName() + "'";
        String properties = RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(cause.endpointName()) ? "rpma.server"
                : "rpma.server.endpoints." + cause.endpointName();
        RpmaException failure = cause.rpmaCause();
        RpmaFailureKind kind = RpmaFailureKind.classify(failure);
        String problem = kind.problem(cause.address(), cause.port());
        if (problem == null) {
            return new FailureAnalysis(endpoint + " could not listen on " + cause.address() + ":" + cause.port() + ": "
                    + failure.getMessage(),
                    "Check that " + cause.address() + " belongs to an RDMA-capable interface and that the RDMA modules"
                            + " (ib_uverbs, rdma_ucm) are loaded; librpma's log (logger 'dev.rpma.librpma') has details.",
                    cause);
        }
        String property = (kind == RpmaFailureKind.PORT_IN_USE) ? properties + ".port" : properties + ".address";
        return new FailureAnalysis(endpoint + " could not listen: " + problem + " (" + failure.diagnostic() + ").",
                kind.advice(cause.address(), cause.port()) + ". The endpoint's "
                        + ((kind == RpmaFailureKind.PORT_IN_USE) ? "port" : "address") + " is set by '" + property + "'.",
                cause);
    }
}
