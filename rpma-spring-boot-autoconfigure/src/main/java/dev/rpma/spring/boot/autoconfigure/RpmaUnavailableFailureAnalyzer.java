package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.binding.RpmaUnavailableException;

/** librpma is not installed. */
class RpmaUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<RpmaUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaUnavailableException cause) {
        return new FailureAnalysis("The RDMA server needs librpma, which could not be loaded. " + cause.problem() + ".",
                cause.advice() + ". To run without RDMA, set 'rpma.server.enabled=false'.", cause);
    }
}
