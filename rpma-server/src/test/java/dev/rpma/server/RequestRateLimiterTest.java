package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The token bucket of the request-rate limit, on times the test passes: never a sleep. */
class RequestRateLimiterTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    /** Any origin: {@link System#nanoTime()} may be negative. */
    private static final long T0 = -5 * SECOND;

    @Test
    void aFullBucketLetsABurstThroughThenOnePerInterval() {
        RequestRateLimiter limiter = new RequestRateLimiter(new RpmaEndpointSettings.RequestRate(10, 3), T0);

        assertThat(limiter.tryAcquire(T0)).isTrue();
        assertThat(limiter.tryAcquire(T0)).isTrue();
        assertThat(limiter.tryAcquire(T0)).isTrue();
        assertThat(limiter.tryAcquire(T0)).as("the burst is spent").isFalse();
        assertThat(limiter.tryAcquire(T0 + SECOND / 10 - 1)).as("a nanosecond before the next permit").isFalse();
        assertThat(limiter.tryAcquire(T0 + SECOND / 10)).as("exactly one interval later").isTrue();
        assertThat(limiter.tryAcquire(T0 + SECOND / 10)).isFalse();
    }

    @Test
    void aSteadyRateAtTheLimitIsNeverRefused() {
        RequestRateLimiter limiter = new RequestRateLimiter(new RpmaEndpointSettings.RequestRate(1000, 1), T0);
        for (int i = 0; i < 10_000; i++) {
            assertThat(limiter.tryAcquire(T0 + i * (SECOND / 1000))).as("request %d", i).isTrue();
        }
    }

    @Test
    void aFloodGetsTheRateAndNoMore() {
        RequestRateLimiter limiter = new RequestRateLimiter(new RpmaEndpointSettings.RequestRate(100, 20), T0);
        int admitted = 0;
        // a request every 100 µs for 10 s: 100,000 requests
        for (long t = T0; t < T0 + 10 * SECOND; t += SECOND / 10_000) {
            if (limiter.tryAcquire(t)) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(20 + 100 * 10 - 1);
    }

    @Test
    void aQuietTimeRefillsTheBucketUpToTheBurstOnly() {
        RequestRateLimiter limiter = new RequestRateLimiter(new RpmaEndpointSettings.RequestRate(1, 2), T0);
        assertThat(limiter.tryAcquire(T0)).isTrue();
        assertThat(limiter.tryAcquire(T0)).isTrue();
        assertThat(limiter.tryAcquire(T0)).isFalse();

        long later = T0 + 3600 * SECOND;
        assertThat(limiter.tryAcquire(later)).isTrue();
        assertThat(limiter.tryAcquire(later)).isTrue();
        assertThat(limiter.tryAcquire(later)).isFalse();
    }

    @Test
    void ratesBelowOneASecond() {
        RequestRateLimiter limiter = new RequestRateLimiter(new RpmaEndpointSettings.RequestRate(0.5, 1), T0);
        assertThat(limiter.tryAcquire(T0)).isTrue();
        assertThat(limiter.tryAcquire(T0 + SECOND)).isFalse();
        assertThat(limiter.tryAcquire(T0 + 2 * SECOND)).isTrue();
    }

    @Test
    void theDefaultBurstIsOneSecondsPermits() {
        assertThat(RpmaEndpointSettings.RequestRate.perSecond(100).burst()).isEqualTo(100);
        assertThat(RpmaEndpointSettings.RequestRate.perSecond(2.5).burst()).isEqualTo(3);
        assertThat(RpmaEndpointSettings.RequestRate.perSecond(0.1).burst()).isEqualTo(1);
    }

    @Test
    void aRateIsPositiveAndFiniteAndABurstAtLeastOne() {
        assertThatIllegalArgumentException().isThrownBy(() -> new RpmaEndpointSettings.RequestRate(0, 1));
        assertThatIllegalArgumentException().isThrownBy(() -> new RpmaEndpointSettings.RequestRate(-1, 1));
        assertThatIllegalArgumentException().isThrownBy(() -> new RpmaEndpointSettings.RequestRate(Double.NaN, 1));
        assertThatIllegalArgumentException()
            .isThrownBy(() -> new RpmaEndpointSettings.RequestRate(Double.POSITIVE_INFINITY, 1));
        assertThatIllegalArgumentException().isThrownBy(() -> new RpmaEndpointSettings.RequestRate(1, 0));
    }
}
