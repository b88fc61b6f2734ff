package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.server.RpmaListenException;

/** An endpoint could not listen: no RDMA device at its address, port in use, or another librpma error. */
class RpmaListenFailureAnalyzer extends AbstractFailureAnalyzer<RpmaListenException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaListenException cause) {
        String where = cause.address() + ":" + cause.port();
        String property = "default".equals(cause.endpointName()) ? "rpma.server"
                : "rpma.server.endpoints." + cause.endpointName();
        return switch (cause.reason()) {
            case NO_DEVICE -> new FailureAnalysis("RDMA endpoint '" + cause.endpointName() + "' could not listen on "
                    + where + ": no RDMA device serves " + cause.address() + " (" + cause.rpmaCause().getMessage() + ")",
                    "Set '" + property + ".address' to the IP address of an RDMA-capable interface. Without RDMA"
                            + " hardware, create a soft-RoCE device on the interface with that address ('modprobe rdma_rxe;"
                            + " rdma link add rxe0 type rxe netdev <interface>'), or run the application inside the"
                            + " project's soft-RoCE VM harness (tools/rxe-vm/rxe-vm.sh). 127.0.0.1 never works.",
                    cause);
            case PORT_IN_USE -> new FailureAnalysis("RDMA endpoint '" + cause.endpointName() + "' could not listen on "
                    + where + ": the port is already in use.",
                    "Stop the process that listens on " + where + ", or set '" + property + ".port' to a free port.",
                    cause);
            case OTHER -> new FailureAnalysis("RDMA endpoint '" + cause.endpointName() + "' could not listen on " + where
                    + ": " + cause.rpmaCause().getMessage(),
                    "Check that " + cause.address() + " belongs to an RDMA-capable interface and that the RDMA modules"
                            + " (ib_uverbs, rdma_ucm) are loaded; librpma's log (logger 'dev.rpma.librpma') has details.",
                    cause);
        };
    }
}
