package dev.rpma.spring.boot.autoconfigure;

import java.util.List;
import java.util.Objects;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The project's failure analyzers as Spring Boot finds them: from {@code META-INF/spring.factories}.
 * Analyzing through them (not through {@code new XFailureAnalyzer()}) also proves they are registered.
 */
final class RpmaFailureAnalyzers {

    private RpmaFailureAnalyzers() {
    }

    /** Every registered analyzer of this project; Boot's own ones need constructor arguments and are skipped. */
    static List<FailureAnalyzer> registered() {
        return SpringFactoriesLoader.forDefaultResourceLocation(RpmaFailureAnalyzers.class.getClassLoader())
            .load(FailureAnalyzer.class, (type, name, ex) -> {
            })
            .stream()
            .filter((analyzer) -> analyzer.getClass().getName().startsWith("dev.rpma."))
            .toList();
    }

    /** The analysis Boot would print for a startup failure; exactly one of the project's analyzers must claim it. */
    static FailureAnalysis analyze(Throwable failure) {
        List<FailureAnalysis> analyses = registered().stream()
            .map((analyzer) -> analyzer.analyze(failure))
            .filter(Objects::nonNull)
            .toList();
        assertThat(analyses).as("analyses of %s", failure).hasSize(1);
        return analyses.get(0);
    }
}
