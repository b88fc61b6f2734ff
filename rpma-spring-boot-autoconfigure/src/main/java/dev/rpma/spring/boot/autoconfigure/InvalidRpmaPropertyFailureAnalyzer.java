package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** An {@code rpma.*} property is invalid. */
class InvalidRpmaPropertyFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRpmaPropertyException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidRpmaPropertyException cause) {
        return new FailureAnalysis("Property '" + cause.property() + "' " + ((cause.value() != null)
                ? "has the invalid value '" + cause.value() + "': " : "") + cause.reason(),
                (cause.action() != null) ? cause.action() + "."
                        : "Update '" + cause.property() + "' in your application's configuration.", cause);
    }
}
