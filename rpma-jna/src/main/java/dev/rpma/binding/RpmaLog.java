package dev.rpma.binding;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.internal.NativeLogFunction;

/**
 * librpma's logging: its thresholds, and where its lines go. {@link #routeToSlf4j()} sends every
 * line to the SLF4J logger {@value #LOGGER_NAME} at the matching level (FATAL and ERROR to error,
 * WARNING to warn, NOTICE and INFO to info, DEBUG to debug), with librpma's file, line and function.
 * Thread-safe.
 */
public final class RpmaLog {

    /** The SLF4J logger librpma's lines go to. */
    public static final String LOGGER_NAME = "dev.rpma.librpma";

    private static final Logger LOGGER = LoggerFactory.getLogger(LOGGER_NAME);

    private final Rpma rpma;

    RpmaLog(Rpma rpma) {
        this.rpma = rpma;
    }

    /** librpma's log levels ({@code enum rpma_log_level}). */
    public enum Level {
        DISABLED(-1), FATAL(0), ERROR(1), WARNING(2), NOTICE(3), INFO(4), DEBUG(5);

        final int code;

        Level(int code) {
            this.code = code;
        }

        static Level of(int code) {
            for (Level level : values()) {
                if (level.code == code) {
                    return level;
                }
            }
            throw new IllegalArgumentException("unknown librpma log level " + code);
        }
    }

    /** librpma's thresholds ({@code enum rpma_log_threshold}). */
    public enum Threshold {
        /** {@code RPMA_LOG_THRESHOLD}: lines at or above it reach the log function (default WARNING). */
        PRIMARY(0),
        /** {@code RPMA_LOG_THRESHOLD_AUX}: the default function's copy to stderr (default DISABLED). */
        AUX(1);

        final int code;

        Threshold(int code) {
            this.code = code;
        }
    }

    /** Sets a threshold ({@code rpma_log_set_threshold}). */
    public void setThreshold(Threshold threshold, Level level) {
        this.rpma.check(this.rpma.lib().rpma_log_set_threshold(threshold.code, level.code), "rpma_log_set_threshold");
    }

    /** A threshold ({@code rpma_log_get_threshold}). */
    public Level threshold(Threshold threshold) {
        Scratch scratch = Scratch.get();
        this.rpma.check(this.rpma.lib().rpma_log_get_threshold(threshold.code, scratch.at(Scratch.OUT)),
                "rpma_log_get_threshold");
        return Level.of(scratch.buffer.getInt(Scratch.OUT));
    }

    /**
     * Sends librpma's lines to SLF4J ({@code rpma_log_set_function}) and lowers the primary threshold
     * to the most detailed level the SLF4J logger has enabled, so nothing enabled is filtered out
     * before it reaches Java.
     */
    public void routeToSlf4j() {
        long function = NativeLogFunction.functionPointer(RpmaLog::toSlf4j);
        this.rpma.check(this.rpma.lib().rpma_log_set_function(function), "rpma_log_set_function");
        setThreshold(Threshold.PRIMARY, enabledLevel());
    }

    /** Restores librpma's own syslog/stderr logger. */
    public void routeToDefault() {
        this.rpma.check(this.rpma.lib().rpma_log_set_function(NativeLogFunction.DEFAULT_FUNCTION),
                "rpma_log_set_function");
    }

    /** librpma's line for a non-blocking {@code rdma_get_cm_event} with nothing queued. */
    static boolean isEmptyNonBlockingRead(@Nullable String message) {
        return message != null && message.contains("rdma_get_cm_event()")
                && message.endsWith("Resource temporarily unavailable");
    }

    private static Level enabledLevel() {
        if (LOGGER.isDebugEnabled()) {
            return Level.DEBUG;
        }
        if (LOGGER.isInfoEnabled()) {
            return Level.INFO;
        }
        if (LOGGER.isWarnEnabled()) {
            return Level.WARNING;
        }
        return LOGGER.isErrorEnabled() ? Level.ERROR : Level.DISABLED;
    }

    static void toSlf4j(int level, String file, int line, String function, String message) {
        if (isEmptyNonBlockingRead(message)) {
            // librpma logs EAGAIN of a non-blocking fd at ERROR, though it is how "nothing yet" looks
            // there (and this binding returns it as null, not as an error)
            LOGGER.debug("{}:{} {}(): {}", file, line, function, message);
            return;
        }
        switch (level) {
            case 0, 1 -> LOGGER.error("{}:{} {}(): {}", file, line, function, message);
            case 2 -> LOGGER.warn("{}:{} {}(): {}", file, line, function, message);
            case 3, 4 -> LOGGER.info("{}:{} {}(): {}", file, line, function, message);
            default -> LOGGER.debug("{}:{} {}(): {}", file, line, function, message);
        }
    }
}
