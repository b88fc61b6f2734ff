package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Run by {@link RpmaMemoryLockNativeTest} in a JVM started under a small memory-lock limit: starts the
 * auto-configuration over the installed librpma with a region larger than the limit, and prints the
 * limit the JVM read, the failure and its analysis.
 */
public final class MemoryLockLimitedApplication {

    static final String LIMIT = "LIMIT: ";

    static final String FAILURE = "FAILURE: ";

    static final String DESCRIPTION = "DESCRIPTION: ";

    static final String ACTION = "ACTION: ";

    private MemoryLockLimitedApplication() {
    }

    public static void main(String[] args) {
        System.out.println(LIMIT + dev.rpma.binding.Rpma.get().memoryLockLimit());
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
            .withBean(Handlers.Greeter.class)
            .withPropertyValues("rpma.server.address=198.18.0.1", "rpma.server.regions.catalog.size=1MB")
            .run((context) -> {
                Throwable failure = context.getStartupFailure();
                while (failure != null && failure.getCause() != null
                        && !(failure instanceof dev.rpma.server.RpmaMemoryLockException)) {
                    failure = failure.getCause();
                }
                System.out.println(FAILURE + ((failure != null) ? failure.getClass().getName() : "none"));
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                System.out.println(DESCRIPTION + analysis.getDescription());
                System.out.println(ACTION + analysis.getAction());
            });
    }
}
