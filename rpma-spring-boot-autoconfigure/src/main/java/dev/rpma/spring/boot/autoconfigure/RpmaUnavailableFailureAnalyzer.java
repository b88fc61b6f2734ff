package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.jna.RpmaUnavailableException;
import dev.rpma.jna.raw.RpmaLibraryLoader;

/** librpma is not installed. */
class RpmaUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<RpmaUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaUnavailableException cause) {
        return new FailureAnalysis("The RDMA server needs librpma, which could not be loaded: " + cause.getMessage(),
                "Install librpma (Debian/Ubuntu: 'sudo apt-get install librpma0'), or set the system property '"
                        + RpmaLibraryLoader.PROPERTY + "' or the environment variable '" + RpmaLibraryLoader.ENVIRONMENT
                        + "' to the library's path. To run without RDMA, set 'rpma.server.enabled=false'.",
                cause);
    }
}
