package dev.rpma.server.admission;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock a test sets and moves; never the system's. */
final class MutableClock extends Clock {

    private volatile long millis;

    MutableClock(long epochSecond) {
        this.millis = epochSecond * 1000;
    }

    void setMillis(long millis) {
        this.millis = millis;
    }

    void setSeconds(long epochSecond) {
        this.millis = epochSecond * 1000;
    }

    void advanceSeconds(long seconds) {
        this.millis += seconds * 1000;
    }

    @Override
    public long millis() {
        return this.millis;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(this.millis);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException();
    }
}
