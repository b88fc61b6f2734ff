package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.spring.annotation.RpmaHandlerConfigurationException;

/** Handlers do not match the configured endpoints. */
class RpmaHandlerConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RpmaHandlerConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaHandlerConfigurationException cause) {
        return new FailureAnalysis(cause.getMessage(),
                "Give endpoint '" + cause.endpoint() + "' exactly one bean method annotated"
                        + " @RpmaConnectionHandler(endpoint = \"" + cause.endpoint() + "\") taking an RpmaIncomingRequest,"
                        + " or configure the endpoint under 'rpma.server.endpoints." + cause.endpoint() + "'.",
                cause);
    }
}
