package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Run by {@link RpmaStartupFailureTests#librpmaMissing()} in a JVM where librpma cannot be loaded:
 * starts the auto-configuration without a user {@code Rpma} bean and prints the failure and its analysis.
 */
public final class LibrpmaMissingApplication {

    static final String FAILURE = "FAILURE: ";

    static final String DESCRIPTION = "DESCRIPTION: ";

    static final String ACTION = "ACTION: ";

    private LibrpmaMissingApplication() {
    }

    public static void main(String[] args) {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
            .withPropertyValues("rpma.server.address=198.18.0.1")
            .run((context) -> {
                Throwable failure = context.getStartupFailure();
                while (failure != null && failure.getCause() != null
                        && !(failure instanceof dev.rpma.binding.RpmaUnavailableException)) {
                    failure = failure.getCause();
                }
                System.out.println(FAILURE + ((failure != null) ? failure.getClass().getName() : "none"));
                FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(context.getStartupFailure());
                System.out.println(DESCRIPTION + analysis.getDescription());
                System.out.println(ACTION + analysis.getAction());
            });
    }
}
