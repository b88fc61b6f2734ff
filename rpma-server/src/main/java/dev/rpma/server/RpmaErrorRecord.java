package dev.rpma.server;

import java.time.Instant;

import dev.rpma.binding.RpmaException;

/**
 * One error the acceptor met: when, in which librpma function, with which code and text.
 *
 * @param time when it happened
 * @param function the C function
 * @param code the {@code RPMA_E_*} name
 * @param errno the provider's errno, 0 if none
 * @param message librpma's text and the errno
 */
public record RpmaErrorRecord(Instant time, String function, String code, int errno, String message) {

    static RpmaErrorRecord of(RpmaException ex) {
        return new RpmaErrorRecord(Instant.now(), ex.function(), ex.error().cName(), ex.errno(),
                ex.librpmaText() + ((ex.errno() != 0) ? " (errno " + ex.errno() + ")" : ""));
    }
}
