package dev.rpma.spring.boot.actuate.endpoint;

import java.time.Instant;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jackson.JacksonEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationFilter;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.ParameterValueMapper;
import org.springframework.boot.actuate.endpoint.jackson.EndpointJsonMapper;
import org.springframework.boot.actuate.endpoint.web.EndpointMediaTypes;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.WebOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpointDiscoverer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.spring.boot.actuate.Await;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.spring.boot.actuate.ScriptedHandler;
import dev.rpma.spring.boot.actuate.endpoint.RpmaActuatorEndpoint.EndpointDescriptor;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaEndpointState;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaServer;

import static dev.rpma.spring.boot.actuate.FakeRpmaServer.ADDRESS;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.PORT;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.submit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The {@code rpma} actuator endpoint: exposure by the usual properties, its JSON as actuator writes
 * it, its web mapping, pausing and resuming.
 */
class RpmaActuatorEndpointAutoConfigurationTests {

    private static final String SECRET = "TOP-SECRET-42";

    private final FakeLibRpma fake = new FakeLibRpma();

    private final ApplicationContextRunner runner = FakeRpmaServer.runner(this.fake)
        .withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
                JacksonEndpointAutoConfiguration.class, RpmaActuatorEndpointAutoConfiguration.class))
        .withBean(ScriptedHandler.class);

    private final ApplicationContextRunner exposed = this.runner
        .withPropertyValues("management.endpoints.web.exposure.include=health,rpma");

    @AfterEach
    void checkFake() {
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void notAvailableUnlessExposed() {
        this.runner.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaActuatorEndpoint.class));
    }

    @Test
    void availableWhenExposedOverTheWeb() {
        this.exposed.run((context) -> assertThat(context).hasSingleBean(RpmaActuatorEndpoint.class));
    }

    @Test
    void notAvailableWhenItsAccessIsNone() {
        this.exposed.withPropertyValues("management.endpoint.rpma.access=NONE")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaActuatorEndpoint.class));
    }

    @Test
    void readOnlyByDefaultSoPauseAndResumeAreLeftOut() {
        this.exposed.run((context) -> assertThat(operations(context)).containsOnlyKeys("GET rpma", "GET rpma/{name}"));
    }

    @Test
    void unrestrictedAccessAddsThePostToPauseOrResume() {
        this.exposed.withPropertyValues("management.endpoint.rpma.access=UNRESTRICTED")
            .run((context) -> assertThat(operations(context)).containsOnlyKeys("GET rpma", "GET rpma/{name}",
                    "POST rpma/{name}"));
    }

    @Test
    void jsonShowsAddressStateQueueConnectionsTotalsAndErrorsButNoPrivateData() {
        this.exposed.run((context) -> {
            RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
            FakeEndpoint endpoint = this.fake.endpointAt(ADDRESS, PORT);
            submit(endpoint, statistics, SECRET);
            submit(endpoint, statistics, ScriptedHandler.REJECT);
            endpoint.queueUnexpectedEvent();
            Await.until("the INVAL error and the established connection",
                    () -> statistics.errors("rpma_ep_next_conn_req", "RPMA_E_INVAL") == 1
                            && statistics.events(dev.rpma.binding.RpmaConnectionEvent.ESTABLISHED) == 1);

            String json = json(context, operations(context).get("GET rpma").invoke(invocation(Map.of())));
            assertThat(json).doesNotContain(SECRET)
                .doesNotContain(Base64.getEncoder().encodeToString(ScriptedHandler.data(SECRET)));

            ObjectNode tree = (ObjectNode) JsonMapper.builder().build().readTree(json);
            JsonNode lastError = tree.at("/endpoints/default/lastErrors/0");
            Instant time = Instant.parse(lastError.get("time").asString());
            assertThat(time).isBeforeOrEqualTo(Instant.now());
            ((ObjectNode) lastError).remove("time");
            ObjectNode open = (ObjectNode) tree.at("/endpoints/default/sessions/open/0");
            assertThat(open.get("id").asLong()).isPositive();
            open.remove("id");
            assertThat(tree).isEqualTo(JsonMapper.builder().build().readTree("""
                    {"endpoints": {"default": {
                      "name": "default", "address": "198.18.0.1", "port": 7204, "state": "RUNNING",
                      "queue": {"size": 0, "capacity": 64, "remaining": 64},
                      "sessions": {"active": 1,
                        "ended": {"closed": 0, "closed-by-server": 0, "lost": 0, "idle": 0, "error": 0, "capacity": 0,
                                  "shutdown": 0},
                        "open": [{"state": "ESTABLISHED", "messagesReceived": 0, "messagesSent": 0}]},
                      "requests": {"obtained": 2, "accepted": 1,
                        "rejected": {"handler": 1, "queue-full": 0, "capacity": 0, "handler-failed": 0, "deadline": 0,
                                     "paused": 0, "shutdown": 0, "unauthenticated": 0, "rate-limited": 0},
                        "failedToConnect": 0},
                      "connectionEvents": {"established": 1, "closed": 0, "lost": 0},
                      "errors": [{"function": "rpma_ep_next_conn_req", "code": "RPMA_E_INVAL", "count": 1}],
                      "lastErrors": [{"function": "rpma_ep_next_conn_req", "code": "RPMA_E_INVAL", "errno": 0,
                                      "message": "Invalid argument"}]
                    }}}
                    """));
        });
    }

    @Test
    void lastErrorsAreBoundedWhileTheCountsStayExact() {
        this.exposed.run((context) -> {
            RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
            FakeEndpoint endpoint = this.fake.endpointAt(ADDRESS, PORT);
            for (int i = 0; i < 40; i++) {
                endpoint.queueUnexpectedEvent();
            }
            Await.until("40 INVAL errors", () -> statistics.errors("rpma_ep_next_conn_req", "RPMA_E_INVAL") == 40);
            EndpointDescriptor described = context.getBean(RpmaActuatorEndpoint.class).endpoint("default");
            assertThat(described.lastErrors()).hasSize(RpmaEndpointStatistics.LAST_ERRORS);
            assertThat(described.errors()).singleElement().satisfies((error) -> assertThat(error.count()).isEqualTo(40));
        });
    }

    @Test
    void failedEndpointShowsWhatStoppedIt() {
        this.exposed.run((context) -> {
            RpmaServer server = context.getBean(RpmaServer.class);
            this.fake.endpointAt(ADDRESS, PORT).queueProviderError(Errno.EBADF);
            Await.until("the endpoint to fail", () -> server.endpoint("default").state() == RpmaEndpointState.FAILED);
            EndpointDescriptor described = context.getBean(RpmaActuatorEndpoint.class).endpoint("default");
            assertThat(described.state()).isEqualTo(RpmaEndpointState.FAILED);
            assertThat(described.failure()).contains("RPMA_E_PROVIDER", "errno 9 (EBADF)");
            assertThat(described.lastErrors()).singleElement()
                .satisfies((error) -> assertThat(error.message()).isEqualTo("Provider error occurred (errno 9)"));
        });
    }

    @Test
    void degradedEndpointShowsWhatItBacksOffFromUntilItTakesRequestsAgain() {
        this.exposed.run((context) -> {
            RpmaServer server = context.getBean(RpmaServer.class);
            FakeEndpoint endpoint = this.fake.endpointAt(ADDRESS, PORT);
            endpoint.failEveryLook(RpmaError.PROVIDER.code(), Errno.EMFILE);
            endpoint.queueNoEvent();
            Await.until("the endpoint degraded", () -> server.endpoint("default").state() == RpmaEndpointState.DEGRADED);
            EndpointDescriptor described = context.getBean(RpmaActuatorEndpoint.class).endpoint("default");
            assertThat(described.state()).isEqualTo(RpmaEndpointState.DEGRADED);
            assertThat(described.failure()).contains("RPMA_E_PROVIDER", "EMFILE");

            endpoint.stopFailing();
            Await.until("the endpoint running", () -> server.endpoint("default").state() == RpmaEndpointState.RUNNING);
            described = context.getBean(RpmaActuatorEndpoint.class).endpoint("default");
            assertThat(described.failure()).isNull();
        });
    }

    @Test
    void pauseRejectsAndCountsRequestsUntilResumed() {
        this.exposed.withPropertyValues("management.endpoint.rpma.access=UNRESTRICTED").run((context) -> {
            Map<String, WebOperation> operations = operations(context);
            RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
            FakeEndpoint endpoint = this.fake.endpointAt(ADDRESS, PORT);

            Object paused = operations.get("POST rpma/{name}").invoke(invocation(Map.of("name", "default", "action", "pause")));
            assertThat(paused).isInstanceOfSatisfying(EndpointDescriptor.class,
                    (descriptor) -> assertThat(descriptor.state()).isEqualTo(RpmaEndpointState.PAUSED));
            submit(endpoint, statistics, ScriptedHandler.ACCEPT);
            submit(endpoint, statistics, ScriptedHandler.ACCEPT);
            assertThat(statistics.rejected(RejectReason.PAUSED)).isEqualTo(2);
            assertThat(statistics.accepted()).isZero();
            assertThat(json(context, operations.get("GET rpma/{name}").invoke(invocation(Map.of("name", "default")))))
                .contains("\"state\":\"PAUSED\"").contains("\"paused\":2");

            Object resumed = operations.get("POST rpma/{name}").invoke(invocation(Map.of("name", "default", "action", "resume")));
            assertThat(resumed).isInstanceOfSatisfying(EndpointDescriptor.class,
                    (descriptor) -> assertThat(descriptor.state()).isEqualTo(RpmaEndpointState.RUNNING));
            submit(endpoint, statistics, ScriptedHandler.ACCEPT);
            assertThat(statistics.accepted()).isOne();
            assertThat(statistics.rejected(RejectReason.PAUSED)).isEqualTo(2);
        });
    }

    @Test
    void unknownEndpointIsNotFoundAndUnknownActionIsABadRequest() {
        this.exposed.run((context) -> {
            RpmaActuatorEndpoint endpoint = context.getBean(RpmaActuatorEndpoint.class);
            assertThat(endpoint.endpoint("nope")).isNull();
            assertThat(endpoint.accepting("nope", "pause")).isNull();
            assertThatExceptionOfType(InvalidEndpointRequestException.class)
                .isThrownBy(() -> endpoint.accepting("default", "stop"))
                .withMessageContaining("'pause' or 'resume'");
            assertThat(endpoint.endpoint("default").state()).isEqualTo(RpmaEndpointState.RUNNING);
        });
    }

    /** The web operations of the endpoint, as actuator maps them, by "METHOD path". */
    private static Map<String, WebOperation> operations(ApplicationContext context) {
        WebEndpointDiscoverer discoverer = new WebEndpointDiscoverer(context, context.getBean(ParameterValueMapper.class),
                EndpointMediaTypes.DEFAULT, List.of(), List.of(),
                context.getBeanProvider(OperationInvokerAdvisor.class).orderedStream().toList(), List.of(),
                List.of(OperationFilter.byAccess(context.getBean(EndpointAccessResolver.class))));
        Collection<ExposableWebEndpoint> endpoints = discoverer.getEndpoints();
        ExposableWebEndpoint rpma = endpoints.stream()
            .filter((endpoint) -> endpoint.getEndpointId().toString().equals("rpma")).findFirst().orElseThrow();
        return rpma.getOperations().stream().collect(Collectors.toMap((operation) -> operation.getRequestPredicate()
            .getHttpMethod() + " " + operation.getRequestPredicate().getPath(), (operation) -> operation));
    }

    private static InvocationContext invocation(Map<String, Object> arguments) {
        return new InvocationContext(SecurityContext.NONE, arguments);
    }

    private static String json(ApplicationContext context, Object body) {
        return context.getBean(EndpointJsonMapper.class).get().writeValueAsString(body);
    }
}
