package dev.rpma.server;

import java.util.ArrayList;
import java.util.List;

import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

/**
 * What the server's loggers wrote while it was open, as events and as the text a file appender
 * would hold (level, logger, message and stack trace, one event after another), so that a test can
 * look at each line as a log reader would.
 */
final class CapturedLog implements AutoCloseable {

    private final Logger logger;

    private final Level levelBefore;

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private final PatternLayout layout = new PatternLayout();

    /** Captures the loggers under {@code dev.rpma}, at DEBUG unless {@code level} says otherwise. */
    CapturedLog(Level level) {
        this.logger = (Logger) LoggerFactory.getLogger("dev.rpma");
        this.levelBefore = this.logger.getLevel();
        this.logger.setLevel(level);
        this.appender.start();
        this.logger.addAppender(this.appender);
        this.layout.setContext((LoggerContext) LoggerFactory.getILoggerFactory());
        this.layout.setPattern("%-5level [%thread] %logger - %msg%n%ex");
        this.layout.start();
    }

    CapturedLog() {
        this(Level.DEBUG);
    }

    List<ILoggingEvent> events() {
        synchronized (this.appender) {
            return new ArrayList<>(this.appender.list);
        }
    }

    /** Events at {@code level}, their formatted messages. */
    List<String> messages(Level level) {
        return events().stream().filter((event) -> event.getLevel() == level).map(ILoggingEvent::getFormattedMessage)
            .toList();
    }

    /** Every line the events make, split where a terminal or a log reader would split them (LF, CR). */
    List<String> lines() {
        StringBuilder text = new StringBuilder();
        for (ILoggingEvent event : events()) {
            text.append(this.layout.doLayout(event));
        }
        return List.of(text.toString().split("\r\n|\r|\n"));
    }

    /** The lines of the events {@code thread} logged, as {@link #lines()} splits them. */
    List<String> linesOf(String thread) {
        StringBuilder text = new StringBuilder();
        for (ILoggingEvent event : events()) {
            if (event.getThreadName().equals(thread)) {
                text.append(this.layout.doLayout(event));
            }
        }
        return List.of(text.toString().split("\r\n|\r|\n"));
    }

    /** The formatted messages of the events {@code thread} logged at {@code level}. */
    List<String> messagesOf(String thread, Level level) {
        return events().stream().filter((event) -> event.getThreadName().equals(thread) && event.getLevel() == level)
            .map(ILoggingEvent::getFormattedMessage)
            .toList();
    }

    @Override
    public void close() {
        this.logger.detachAppender(this.appender);
        this.logger.setLevel(this.levelBefore);
        this.appender.stop();
        this.layout.stop();
    }
}
