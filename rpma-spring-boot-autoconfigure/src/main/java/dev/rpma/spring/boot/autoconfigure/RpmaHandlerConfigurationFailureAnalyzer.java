package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.spring.annotation.RpmaHandlerConfigurationException;
import dev.rpma.spring.server.RpmaEndpointSettings;

/** Handlers do not match the configured endpoints. */
class RpmaHandlerConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RpmaHandlerConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaHandlerConfigurationException cause) {
        String endpoint = cause.endpoint();
        boolean isDefault = RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(endpoint);
        String annotation = isDefault ? "@RpmaConnectionHandler" : "@RpmaConnectionHandler(endpoint = \"" + endpoint + "\")";
        String configuration = isDefault ? "'rpma.server'" : "'rpma.server.endpoints." + endpoint + "'";
        String action = switch (cause.problem()) {
            case NO_HANDLER -> "Annotate one bean method that takes an RpmaIncomingRequest with " + annotation
                    + (isDefault ? ", or set 'rpma.server.enabled=false' to run without the RDMA server."
                            : ", or remove the endpoint's configuration " + configuration + ".");
            case CONFLICTING_HANDLERS -> "Keep " + annotation + " on one of these methods only; bind the others to"
                    + " other endpoints with @RpmaConnectionHandler(endpoint = \"<name>\").";
            case UNKNOWN_ENDPOINT -> "Configure the endpoint under " + configuration + " (at least its port), or"
                    + " correct the endpoint name on the handler.";
            case INVALID_SIGNATURE -> "Declare the method with an RpmaIncomingRequest parameter and, optionally, a"
                    + " String parameter that receives the endpoint name.";
            case NO_HANDLER_METHOD -> "Annotate the method that takes the RpmaIncomingRequest with @RpmaConnectionHandler"
                    + " too; on a class the annotation only sets the endpoint of the class's annotated methods.";
        };
        return new FailureAnalysis(cause.getMessage(), action, cause);
    }
}
