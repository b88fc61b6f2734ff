package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.server.RpmaBackingStore;
import dev.rpma.server.RpmaRegionStoreException;

/**
 * A region's file could not be used as its store asks, after the properties were checked: a DAX
 * region the RDMA device refuses to register, or an {@code RpmaRegionDefinition} bean's mapping.
 */
class RpmaRegionStoreFailureAnalyzer extends AbstractFailureAnalyzer<RpmaRegionStoreException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaRegionStoreException cause) {
        String action = (cause.kind() == RpmaBackingStore.Kind.DAX)
                ? "Serve the region from a device DAX (a path such as /dev/dax0.0) or from a device with on-demand"
                        + " paging, or make it a 'file' region"
                        + " ('rpma.server.regions.<name>.store=file'): clients then flush to visibility and ask the"
                        + " server to make their writes durable."
                : "Fix the file " + cause.path() + " or the region's 'path'.";
        return new FailureAnalysis(cause.getMessage() + ".", action, cause);
    }
}
