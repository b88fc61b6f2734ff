package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.spring.annotation.RpmaHandlerConfigurationException;
import dev.rpma.server.RpmaEndpointSettings;

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
            case INVALID_SIGNATURE -> "Declare the method as its annotation's Javadoc says: a connection handler takes an"
                    + " RpmaIncomingRequest (and optionally a String, the endpoint name) and returns void; a message"
                    + " handler takes the message (ByteBuffer, byte[] or a decoded type) and optionally the RpmaSession;"
                    + " a session event method takes the RpmaSession and optionally an RpmaSessionEnd.";
            case NO_HANDLER_METHOD -> "Annotate the handler methods of the class too; on a class the annotation only"
                    + " sets the endpoint of the class's annotated methods.";
            case CONFLICTING_ROUTES -> "Give each @RpmaMessageHandler of the endpoint a route of its own"
                    + " (@RpmaMessageHandler(route = \"...\")).";
            case ROUTE_ON_RAW_ENDPOINT -> "Keep one @RpmaMessageHandler without a route for the raw endpoint, or set '"
                    + (isDefault ? "rpma.server" : "rpma.server.endpoints." + endpoint) + ".messages.mode=framed' to"
                    + " route its messages.";
            case NO_CODEC -> "Take and return a ByteBuffer or a byte[], or declare an RpmaMessageCodec bean for the"
                    + " type (with Jackson on the class path, JSON types work through the JsonMapper).";
        };
        return new FailureAnalysis(cause.getMessage(), action, cause);
    }
}
