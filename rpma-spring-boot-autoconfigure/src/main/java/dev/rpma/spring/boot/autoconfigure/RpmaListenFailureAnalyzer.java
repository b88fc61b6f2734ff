package dev.rpma.spring.boot.autoconfigure;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

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
 * In a container that was not given the machine's RDMA devices, the action names the flags that pass
 * them in instead ({@link ContainerRdmaDevices}).
 */
class RpmaListenFailureAnalyzer extends AbstractFailureAnalyzer<RpmaListenException> {

    /** Where the container's file system starts: {@code /}, a fake one in tests. */
    private final Path root;

    RpmaListenFailureAnalyzer() {
        this(Path.of("/"));
    }

    RpmaListenFailureAnalyzer(Path root) {
        this.root = root;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaListenException cause) {
        List<String> missing = ContainerRdmaDevices.missing(this.root);
        if (!missing.isEmpty()) {
            return new FailureAnalysis("RDMA endpoint '" + cause.endpointName() + "' could not listen on "
                    + cause.address() + ":" + cause.port() + ": this process runs in a container without the machine's"
                    + " RDMA devices (" + String.join(", ", missing) + " missing; " + cause.rpmaCause().diagnostic() + ").",
                    containerAction(missing), cause);
        }
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

    /** The flags that pass the devices in, for docker and for Kubernetes. */
    private static String containerAction(List<String> missing) {
        List<String> devices = new ArrayList<>(missing);
        if (!devices.contains(ContainerRdmaDevices.RDMA_CM)) {
            devices.add(0, ContainerRdmaDevices.RDMA_CM);
        }
        String flags = devices.stream().map((device) -> "--device " + device).collect(Collectors.joining(" "));
        return "Pass the RDMA devices into the container: 'docker run " + flags + " --network host --ulimit"
                + " memlock=-1:-1 ...' (one --device per /dev/infiniband/uverbs<N> the application uses; the host's"
                + " network, since RDMA devices serve the host's addresses; no limit on locked memory, which RDMA"
                + " registers). In Kubernetes: request the RDMA device plugin's resource, and set hostNetwork: true"
                + " and the IPC_LOCK capability.";
    }
}
