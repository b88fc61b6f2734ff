package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.internal.NativeLogFunction;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.RpmaTexts;

/** {@link RpmaLog} and the text look-ups of {@link Rpma} over the fake (the native tests run them for real). */
class RpmaLogTest {

    private final FakeLibRpma fake = new FakeLibRpma();

    private final Rpma rpma = Rpma.using(this.fake);

    @AfterEach
    void close() {
        this.fake.close();
    }

    @Test
    void thresholdsRoundTrip() {
        RpmaLog log = this.rpma.log();
        assertThat(log.threshold(RpmaLog.Threshold.PRIMARY)).isEqualTo(RpmaLog.Level.WARNING);
        assertThat(log.threshold(RpmaLog.Threshold.AUX)).isEqualTo(RpmaLog.Level.DISABLED);
        for (RpmaLog.Level level : RpmaLog.Level.values()) {
            log.setThreshold(RpmaLog.Threshold.AUX, level);
            assertThat(log.threshold(RpmaLog.Threshold.AUX)).isEqualTo(level);
            assertThat(this.fake.logThreshold(1)).isEqualTo(level.code);
        }
    }

    @Test
    void routeToSlf4jInstallsTheCallbackAndOpensTheThresholdToTheLoggersLevel() {
        this.rpma.log().routeToSlf4j();
        assertThat(this.fake.logFunction()).isNotIn(0L, NativeLogFunction.DEFAULT_FUNCTION);
        // logback's default configuration enables DEBUG
        assertThat(this.fake.logThreshold(0)).isEqualTo(RpmaLog.Level.DEBUG.code);
        this.rpma.log().routeToDefault();
        assertThat(this.fake.logFunction()).isEqualTo(NativeLogFunction.DEFAULT_FUNCTION);
    }

    @Test
    void failuresAreReported() {
        this.fake.failNext("rpma_log_set_function", dev.rpma.binding.RpmaError.NOSUPP);
        assertThatThrownBy(() -> this.rpma.log().routeToSlf4j()).isInstanceOf(RpmaException.class)
                .hasMessageStartingWith("rpma_log_set_function() failed with RPMA_E_NOSUPP");
    }

    @Test
    void textsComeFromTheLibrary() {
        for (RpmaError error : RpmaError.values()) {
            assertThat(this.rpma.errorText(error)).isEqualTo(RpmaTexts.errorText(error.code()));
        }
        assertThat(this.rpma.eventText(RpmaConnectionEvent.CLOSED)).isEqualTo("Connection closed");
    }

    @Test
    void anEmptyNonBlockingReadIsDebugNotError() {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
                .getLogger(RpmaLog.LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender =
                new ch.qos.logback.core.read.ListAppender<>();
        appender.start();
        ch.qos.logback.classic.Level previous = logger.getLevel();
        logger.setLevel(ch.qos.logback.classic.Level.DEBUG);
        logger.addAppender(appender);
        try {
            RpmaLog.toSlf4j(1, "ep.c", 290, "rpma_ep_next_conn_req",
                    "rdma_get_cm_event() failed: Resource temporarily unavailable");
            RpmaLog.toSlf4j(1, "utils.c", 50, "rpma_utils_get_ibv_context",
                    "rdma_getaddrinfo(127.0.0.1) failed: No such device");
        }
        finally {
            logger.detachAppender(appender);
            logger.setLevel(previous);
        }
        org.assertj.core.api.Assertions.assertThat(appender.list)
                .extracting((event) -> event.getLevel().toString())
                .containsExactly("DEBUG", "ERROR");
    }
}
