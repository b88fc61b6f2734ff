package dev.rpma.spring.boot.actuate.metrics;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.Await;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.spring.boot.actuate.ScriptedHandler;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaServer;

import static dev.rpma.spring.boot.actuate.FakeRpmaServer.ADDRESS;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.PORT;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.submit;
import static dev.rpma.spring.boot.actuate.ScriptedHandler.ACCEPT;
import static dev.rpma.spring.boot.actuate.ScriptedHandler.BLOCK;
import static dev.rpma.spring.boot.actuate.ScriptedHandler.CHECKED;
import static dev.rpma.spring.boot.actuate.ScriptedHandler.REJECT;
import static dev.rpma.spring.boot.actuate.ScriptedHandler.THROW;
import static dev.rpma.spring.boot.actuate.ScriptedHandler.data;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code rpma.*} meters over the scripted fake: known scenarios, exact values.
 */
class RpmaMetricsAutoConfigurationTests {

    private static final int SLOW_PORT = 7205;

    private final FakeLibRpma fake = new FakeLibRpma();

    private final ApplicationContextRunner withoutMetrics = FakeRpmaServer.runner(this.fake)
        .withBean(ScriptedHandler.class);

    private final ApplicationContextRunner runner = this.withoutMetrics
        .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                RpmaMetricsAutoConfiguration.class));

    @AfterEach
    void checkFake() {
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void countsEveryOutcomeErrorEventAndHandlerInvocationExactly() {
        this.runner.withBean(SlowHandler.class)
            .withPropertyValues("rpma.server.acceptor.handler-threads=1", "rpma.server.acceptor.queue-capacity=1",
                    "rpma.server.acceptor.request-deadline=60s", "rpma.server.endpoints.slow.port=" + SLOW_PORT,
                    "rpma.server.endpoints.slow.acceptor.request-deadline=100ms")
            .run((context) -> {
                MeterRegistry registry = context.getBean(MeterRegistry.class);
                assertThat(registry).isInstanceOf(SimpleMeterRegistry.class);
                RpmaServer server = context.getBean(RpmaServer.class);
                RpmaEndpointStatistics statistics = server.endpoint("default").statistics();
                FakeEndpoint endpoint = this.fake.endpointAt(ADDRESS, PORT);
                ScriptedHandler handler = context.getBean(ScriptedHandler.class);

                // no error met yet: no error counter either (they appear with their function and code)
                assertThat(registry.find(RpmaEndpointMetrics.ACCEPTOR_ERRORS).meters()).isEmpty();

                submit(endpoint, statistics, ACCEPT);
                submit(endpoint, statistics, ACCEPT);
                submit(endpoint, statistics, ACCEPT);
                submit(endpoint, statistics, REJECT);
                submit(endpoint, statistics, REJECT);
                submit(endpoint, statistics, THROW);
                submit(endpoint, statistics, CHECKED);
                this.fake.failNext("rpma_conn_req_connect", RpmaError.PROVIDER.code(), Errno.EIO);
                submit(endpoint, statistics, ACCEPT);

                // an event that was not a connection request: RPMA_E_INVAL, the endpoint goes on
                endpoint.queueUnexpectedEvent();
                Await.until("the INVAL counter", () -> errors(registry, "default", "RPMA_E_INVAL") == 1);

                // queue overflow: one request in the only handler thread, one in the queue of one, one too many
                endpoint.queueRequest(data(BLOCK));
                Await.until("the handler to block", () -> handler.blocked.getCount() == 0);
                endpoint.queueRequest(data(ACCEPT));
                endpoint.queueRequest(data(ACCEPT));
                Await.until("the queue-full reject", () -> statistics.rejected(RejectReason.QUEUE_FULL) == 1);
                assertThat(gauge(registry, RpmaEndpointMetrics.QUEUE_SIZE, "default")).isEqualTo(1);
                assertThat(gauge(registry, RpmaEndpointMetrics.QUEUE_CAPACITY, "default")).isEqualTo(1);
                assertThat(gauge(registry, RpmaEndpointMetrics.QUEUE_REMAINING, "default")).isEqualTo(0);
                handler.release.countDown();
                Await.until("the queued request", () -> statistics.accepted() == 5);
                assertThat(gauge(registry, RpmaEndpointMetrics.QUEUE_SIZE, "default")).isEqualTo(0);
                assertThat(gauge(registry, RpmaEndpointMetrics.QUEUE_REMAINING, "default")).isEqualTo(1);

                // connection events: all five established, then two closed by the client and one lost
                Await.until("five established connections",
                        () -> statistics.events(RpmaConnectionEvent.ESTABLISHED) == 5);
                assertThat(gauge(registry, RpmaEndpointMetrics.ACTIVE_SESSIONS, "default")).isEqualTo(5);
                List<FakeConnection> connections = this.fake.connections();
                assertThat(connections).hasSize(5);
                connections.get(0).queueEvent(RpmaConnectionEvent.CLOSED);
                connections.get(1).queueEvent(RpmaConnectionEvent.CLOSED);
                connections.get(2).queueEvent(RpmaConnectionEvent.LOST);
                Await.until("three connections deleted", () -> statistics.activeConnections() == 2);

                // a handler that never decides, on an endpoint with a short deadline
                RpmaEndpointStatistics slow = server.endpoint("slow").statistics();
                this.fake.endpointAt(ADDRESS, SLOW_PORT).queueRequest(data("wait"));
                Await.until("the deadline reject", () -> slow.rejected(RejectReason.DEADLINE) == 1);
                Await.until("every handler timed", () -> handlerCount(registry, "default") == 10
                        && handlerCount(registry, "slow") == 1);

                assertThat(requests(registry, "default", "accepted", "none")).isEqualTo(5);
                assertThat(requests(registry, "default", "rejected", "handler")).isEqualTo(2);
                assertThat(requests(registry, "default", "rejected", "handler-failed")).isEqualTo(2);
                assertThat(requests(registry, "default", "rejected", "queue-full")).isEqualTo(1);
                assertThat(requests(registry, "default", "rejected", "deadline")).isEqualTo(0);
                assertThat(requests(registry, "default", "rejected", "paused")).isEqualTo(0);
                assertThat(requests(registry, "default", "rejected", "shutdown")).isEqualTo(0);
                assertThat(requests(registry, "default", "failed", "connect-error")).isEqualTo(1);
                assertThat(requests(registry, "slow", "rejected", "deadline")).isEqualTo(1);
                assertThat(requests(registry, "slow", "accepted", "none")).isEqualTo(0);

                assertThat(registry.find(RpmaEndpointMetrics.ACCEPTOR_ERRORS).functionCounters())
                    .extracting((counter) -> counter.getId().getTag("endpoint") + " " + counter.getId().getTag("function")
                            + " " + counter.getId().getTag("code") + " " + (long) counter.count())
                    .containsExactlyInAnyOrder("default rpma_ep_next_conn_req RPMA_E_INVAL 1",
                            "default rpma_conn_req_connect RPMA_E_PROVIDER 1");

                assertThat(events(registry, "default", "established")).isEqualTo(5);
                assertThat(events(registry, "default", "closed")).isEqualTo(2);
                assertThat(events(registry, "default", "lost")).isEqualTo(1);
                assertThat(ended(registry, "default", "closed")).isEqualTo(2);
                assertThat(ended(registry, "default", "lost")).isEqualTo(1);
                assertThat(ended(registry, "default", "idle")).isEqualTo(0);
                assertThat(gauge(registry, RpmaEndpointMetrics.ACTIVE_SESSIONS, "default")).isEqualTo(2);
                assertThat(gauge(registry, RpmaEndpointMetrics.ACTIVE_SESSIONS, "slow")).isEqualTo(0);

                // the acceptor carries a connect out after the handler returned: the failed one is the handler's "none"
                assertThat(handlerTimer(registry, "default", "none").count()).isEqualTo(8);
                assertThat(handlerTimer(registry, "default", "IllegalStateException").count()).isEqualTo(1);
                assertThat(handlerTimer(registry, "default", "IOException").count()).isEqualTo(1);
                assertThat(registry.find(RpmaServerMetrics.HANDLER_DURATION).tag("exception", "RpmaException").timer())
                    .isNull();
                assertThat(handlerTimer(registry, "slow", "none").count()).isEqualTo(1);
                assertThat(handlerTimer(registry, "slow", "none").totalTime(TimeUnit.NANOSECONDS)).isPositive();
                assertThat(queueWait(registry, "default").count()).isEqualTo(10);
                assertThat(queueWait(registry, "slow").count()).isEqualTo(1);

                // the loops are the server's, not an endpoint's: one busy and one idle counter each
                assertThat(registry.find(RpmaServerMetrics.LOOP_TIME).functionCounters())
                    .hasSize(2 * server.eventLoops().size())
                    .allSatisfy((meter) -> assertThat(meter.getId().getTag("loop")).startsWith("rpma-loop-"));
                List<Meter> rpmaMeters = registry.getMeters().stream()
                    .filter((meter) -> meter.getId().getName().startsWith("rpma."))
                    .filter((meter) -> !meter.getId().getName().equals(RpmaServerMetrics.LOOP_TIME)).toList();
                assertThat(rpmaMeters).isNotEmpty()
                    .allSatisfy((meter) -> assertThat(meter.getId().getTag("endpoint")).isIn("default", "slow"));
                assertThat(rpmaMeters).extracting((meter) -> meter.getId().getName()).containsOnly(
                        "rpma.request.queue.size", "rpma.request.queue.capacity", "rpma.request.queue.remaining",
                        "rpma.requests", "rpma.acceptor.errors", "rpma.sessions.active", "rpma.sessions.ended",
                        "rpma.messages", "rpma.message.bytes", "rpma.messages.bad", "rpma.message.handler.failures",
                        "rpma.completions.failed",
                        "rpma.sends.waiting", "rpma.sends.queued", "rpma.sessions.slot.memory", "rpma.receives.shared.posted",
                        "rpma.connection.events", "rpma.device.events", "rpma.handler.duration",
                        "rpma.request.queue.wait");
            });
    }

    @Test
    void countsTheDataPathsMessagesBytesBadMessagesFailuresAndSessionEnds() {
        ApplicationContextRunner dataPath = FakeRpmaServer.runner(this.fake)
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                    RpmaMetricsAutoConfiguration.class))
            .withBean(Counter.class)
            .withPropertyValues("rpma.server.messages.mode=raw", "rpma.server.messages.max-message-size=8");
        dataPath.run((context) -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
            FakeEndpoint endpoint = this.fake.endpointAt(ADDRESS, PORT);

            FakeConnection first = connected(endpoint);
            first.deliver(longMessage(1));
            first.deliver(longMessage(Counter.FAIL));
            first.deliver(longMessage(2));
            assertThat(first.awaitSent(2, Await.TIMEOUT)).isTrue();
            FakeConnection second = connected(endpoint);
            second.deliver(new byte[9]);
            Await.until("the oversized message's session ended", () -> statistics.sessionsEnded(
                    dev.rpma.server.RpmaSessionEnd.Reason.ERROR) == 1);
            first.peerDisconnects();
            Await.until("both sessions gone", () -> statistics.activeConnections() == 0);

            assertThat(counter(registry, RpmaEndpointMetrics.MESSAGES, "direction", "received")).isEqualTo(3);
            assertThat(counter(registry, RpmaEndpointMetrics.MESSAGES, "direction", "sent")).isEqualTo(2);
            assertThat(counter(registry, RpmaEndpointMetrics.MESSAGE_BYTES, "direction", "received")).isEqualTo(24);
            assertThat(counter(registry, RpmaEndpointMetrics.MESSAGE_BYTES, "direction", "sent")).isEqualTo(16);
            assertThat(counter(registry, RpmaEndpointMetrics.BAD_MESSAGES, "reason", "oversized")).isEqualTo(1);
            assertThat(counter(registry, RpmaEndpointMetrics.BAD_MESSAGES, "reason", "empty")).isZero();
            assertThat(registry.get(RpmaEndpointMetrics.MESSAGE_HANDLER_FAILURES).functionCounter().count()).isOne();
            assertThat(counter(registry, RpmaEndpointMetrics.FAILED_COMPLETIONS, "operation", "receive")).isZero();
            assertThat(counter(registry, RpmaEndpointMetrics.FAILED_COMPLETIONS, "operation", "send")).isZero();
            assertThat(ended(registry, "default", "closed")).isOne();
            assertThat(ended(registry, "default", "error")).isOne();
            assertThat(gauge(registry, RpmaEndpointMetrics.ACTIVE_SESSIONS, "default")).isZero();
            assertThat(gauge(registry, RpmaEndpointMetrics.SLOT_MEMORY, "default")).isPositive();
            // each session's first message is timed
            assertThat(registry.get(RpmaServerMetrics.MESSAGE_HANDLER_DURATION)
                .tags("endpoint", "default", "handler", "Counter.next", "outcome", "success").timer().count()).isOne();
        });
    }

    @Test
    void metersAppearInThePrometheusScrape() {
        ApplicationContextRunner prometheus = this.withoutMetrics
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    PrometheusMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                    RpmaMetricsAutoConfiguration.class));
        prometheus.run((context) -> {
            RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
            FakeEndpoint endpoint = this.fake.endpointAt(ADDRESS, PORT);
            submit(endpoint, statistics, ACCEPT);
            endpoint.queueUnexpectedEvent();
            // the meter is bound after the count (by the error listener): wait for both
            Await.until("the INVAL error counted and its meter bound", () -> context.getBean(MeterRegistry.class)
                .find(RpmaEndpointMetrics.ACCEPTOR_ERRORS).tag("code", "RPMA_E_INVAL").functionCounters().stream()
                .anyMatch((counter) -> counter.count() == 1));
            Await.until("the handler timed", () -> handlerCount(context.getBean(MeterRegistry.class), "default") == 1);
            Await.until("the connection established",
                    () -> statistics.events(RpmaConnectionEvent.ESTABLISHED) == 1 && statistics.activeConnections() == 1);
            String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
            assertThat(scrape).contains(
                    "rpma_requests_total{endpoint=\"default\",outcome=\"accepted\",reason=\"none\"} 1",
                    "rpma_requests_total{endpoint=\"default\",outcome=\"rejected\",reason=\"queue-full\"} 0",
                    "rpma_requests_total{endpoint=\"default\",outcome=\"rejected\",reason=\"unauthenticated\"} 0",
                    "rpma_requests_total{endpoint=\"default\",outcome=\"rejected\",reason=\"rate-limited\"} 0",
                    "rpma_acceptor_errors_total{code=\"RPMA_E_INVAL\",endpoint=\"default\",function=\"rpma_ep_next_conn_req\"} 1",
                    "rpma_request_queue_size_requests{endpoint=\"default\"} 0",
                    "rpma_request_queue_capacity_requests{endpoint=\"default\"} 64",
                    "rpma_request_queue_remaining_requests{endpoint=\"default\"} 64",
                    "rpma_sessions_active_sessions{endpoint=\"default\"} 1",
                    "rpma_connection_events_total{endpoint=\"default\",type=\"established\"} 1",
                    "rpma_handler_duration_seconds_count{endpoint=\"default\",exception=\"none\",handler=\"ScriptedHandler.handle\"} 1",
                    // percentiles: both timers publish a histogram
                    "rpma_handler_duration_seconds_bucket{endpoint=\"default\",exception=\"none\",handler=\"ScriptedHandler.handle\",le=",
                    "rpma_request_queue_wait_seconds_bucket{endpoint=\"default\",le=",
                    "rpma_request_queue_wait_seconds_count{endpoint=\"default\"} 1",
                    // the data path's meters, as the README lists them
                    "rpma_sessions_ended_sessions_total{endpoint=\"default\",reason=\"idle\"} 0",
                    "rpma_messages_total{direction=\"received\",endpoint=\"default\"} 0",
                    "rpma_message_bytes_total{direction=\"sent\",endpoint=\"default\"} 0",
                    "rpma_messages_bad_messages_total{endpoint=\"default\",reason=\"oversized\"} 0",
                    "rpma_message_handler_failures_invocations_total{endpoint=\"default\"} 0",
                    "rpma_sends_waiting_messages{endpoint=\"default\"} 0",
                    "rpma_sends_queued_messages_total{endpoint=\"default\"} 0",
                    "rpma_sessions_slot_memory_bytes{endpoint=\"default\"} 0",
                    "rpma_receives_shared_posted_receives{endpoint=\"default\"} 0",
                    "rpma_event_loop_time_seconds_total{loop=\"rpma-loop-0\",state=\"busy\"}");
        });
    }

    @Test
    void bootsMetricsPropertiesApply() {
        this.withoutMetrics
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    PrometheusMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                    RpmaMetricsAutoConfiguration.class))
            .withPropertyValues("management.metrics.distribution.percentiles-histogram.rpma.handler.duration=false",
                    "management.metrics.enable.rpma.sessions=false")
            .run((context) -> {
                RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
                submit(this.fake.endpointAt(ADDRESS, PORT), statistics, ACCEPT);
                Await.until("the handler timed", () -> handlerCount(context.getBean(MeterRegistry.class), "default") == 1);
                String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
                assertThat(scrape).contains("rpma_handler_duration_seconds_count", "rpma_request_queue_wait_seconds_bucket",
                        "rpma_requests_total")
                    .doesNotContain("rpma_handler_duration_seconds_bucket")
                    .doesNotContain("rpma_sessions_active");
            });
    }

    @Test
    void backsOffWithoutAMeterRegistry() {
        this.withoutMetrics.withConfiguration(AutoConfigurations.of(RpmaMetricsAutoConfiguration.class))
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaServerMetrics.class));
    }

    @Test
    void backsOffWhenTheServerIsDisabled() {
        this.runner.withPropertyValues("rpma.server.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaServerMetrics.class));
    }

    @Test
    void userDefinedMetricsObserverReplacesTheAutoConfiguredOne() {
        this.runner.withBean("customRpmaServerMetrics", RpmaServerMetrics.class,
                () -> new RpmaServerMetrics(new SimpleMeterRegistry()))
            .run((context) -> assertThat(context.getBeanNamesForType(RpmaServerMetrics.class))
                .containsExactly("customRpmaServerMetrics"));
    }

    private static double requests(MeterRegistry registry, String endpoint, String outcome, String reason) {
        FunctionCounter counter = registry.get(RpmaEndpointMetrics.REQUESTS)
            .tags("endpoint", endpoint, "outcome", outcome, "reason", reason).functionCounter();
        return counter.count();
    }

    private static double events(MeterRegistry registry, String endpoint, String type) {
        return registry.get(RpmaEndpointMetrics.CONNECTION_EVENTS).tags("endpoint", endpoint, "type", type)
            .functionCounter().count();
    }

    private static FakeConnection connected(FakeEndpoint endpoint) {
        dev.rpma.binding.testing.FakeRequest request = endpoint.queueRequest(new byte[0]);
        assertThat(request.awaitConsumed(Await.TIMEOUT)).isEqualTo(dev.rpma.binding.testing.FakeRequest.State.CONNECTED);
        return request.connection();
    }

    private static byte[] longMessage(long value) {
        return java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(0, value).array();
    }

    private static double counter(MeterRegistry registry, String name, String tag, String value) {
        return registry.get(name).tags("endpoint", "default", tag, value).functionCounter().count();
    }

    private static double ended(MeterRegistry registry, String endpoint, String reason) {
        return registry.get(RpmaEndpointMetrics.SESSIONS_ENDED).tags("endpoint", endpoint, "reason", reason)
            .functionCounter().count();
    }

    private static double errors(MeterRegistry registry, String endpoint, String code) {
        FunctionCounter counter = registry.find(RpmaEndpointMetrics.ACCEPTOR_ERRORS)
            .tags("endpoint", endpoint, "code", code).functionCounter();
        return (counter != null) ? counter.count() : 0;
    }

    private static double gauge(MeterRegistry registry, String name, String endpoint) {
        return registry.get(name).tag("endpoint", endpoint).gauge().value();
    }

    private static Timer handlerTimer(MeterRegistry registry, String endpoint, String exception) {
        return registry.get(RpmaServerMetrics.HANDLER_DURATION)
            .tags("endpoint", endpoint, "handler", handlerName(endpoint), "exception", exception).timer();
    }

    private static String handlerName(String endpoint) {
        return "slow".equals(endpoint) ? "SlowHandler.waitForTheDeadline" : "ScriptedHandler.handle";
    }

    private static long handlerCount(MeterRegistry registry, String endpoint) {
        return registry.find(RpmaServerMetrics.HANDLER_DURATION).tag("endpoint", endpoint).timers().stream()
            .mapToLong(Timer::count).sum();
    }

    private static Timer queueWait(MeterRegistry registry, String endpoint) {
        return registry.get(RpmaServerMetrics.QUEUE_WAIT).tag("endpoint", endpoint).timer();
    }

    /** Answers a raw 8-byte number with the next one; fails on {@link #FAIL}. */
    static class Counter {

        static final long FAIL = 13;

        @RpmaConnectionHandler
        void accept(RpmaIncomingRequest request) {
            request.connect();
        }

        @dev.rpma.spring.annotation.RpmaMessageHandler
        java.nio.ByteBuffer next(java.nio.ByteBuffer message, dev.rpma.server.RpmaSession session) {
            long value = message.getLong(0);
            if (value == FAIL) {
                throw new IllegalArgumentException("unlucky");
            }
            return session.newMessage().putLong(value + 1).flip();
        }
    }

    /** Handles endpoint "slow" by letting every request pass its deadline. */
    static class SlowHandler {

        @RpmaConnectionHandler("slow")
        void waitForTheDeadline(RpmaIncomingRequest request) {
            Await.until("the deadline to reject the request", request::isDecided);
        }
    }
}
