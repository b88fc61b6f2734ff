package dev.rpma.spring.boot.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaAdmission;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;
import dev.rpma.server.admission.RpmaTokenAdmission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code rpma.server.admission.*} bound as Spring Boot binds it, turned into each endpoint's admission
 * step: keys, inheritance by named endpoints and a shared replay memory, the application's steps after
 * the token, every invalid value named with its property, and secrets that appear nowhere.
 */
class RpmaAdmissionsTests {

    static final String SECRET_1 = "first-secret-of-at-least-thirty-two-bytes";

    static final String SECRET_2 = "second-secret-of-at-least-thirty-two-bytes";

    static final byte[] HELLO_SERVER = "Hello server!\0".getBytes(StandardCharsets.US_ASCII);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withUserConfiguration(RpmaServerSettingsFactoryTests.PropertiesConfiguration.class)
        .withPropertyValues("rpma.server.address=198.18.0.1");

    @Test
    void withoutKeysOrStepsNoEndpointHasAnAdmissionStep() {
        this.runner.withPropertyValues("rpma.server.endpoints.replica.port=7205")
            .run((context) -> assertThat(RpmaAdmissions.create(context.getBean(RpmaProperties.class), List.of()))
                .isEmpty());
    }

    @Test
    void keysAreBoundWithTheDefaultsAndHiddenInToString() {
        this.runner.withPropertyValues("rpma.server.admission.keys[0].id=1", "rpma.server.admission.keys[0].secret=" + SECRET_1)
            .run((context) -> {
                RpmaProperties properties = context.getBean(RpmaProperties.class);
                RpmaProperties.Admission admission = properties.getAdmission();
                assertThat(admission.getKeys()).containsExactly(new RpmaProperties.AdmissionKey(1, SECRET_1));
                assertThat(admission.getMaxClockSkew()).isEqualTo(RpmaTokenAdmission.DEFAULT_MAX_CLOCK_SKEW);
                assertThat(admission.getReplayCapacity()).isEqualTo(RpmaTokenAdmission.DEFAULT_REPLAY_CAPACITY);
                assertThat(admission.getKeys().toString()).isEqualTo("[AdmissionKey[id=1, secret=******]]");
                RpmaAdmission step = RpmaAdmissions.create(properties, List.of()).get("default");
                assertThat(step).isInstanceOf(RpmaTokenAdmission.class);
                assertThat(step.toString()).contains("[1]").doesNotContain(SECRET_1);
                byte[] token = RpmaAdmissionToken.issue(RpmaAdmissionKey.of(1, SECRET_1), HELLO_SERVER);
                assertThat(step.admit("default", token).privateData()).isEqualTo(HELLO_SERVER);
            });
    }

    @Test
    void namedEndpointsInheritTheKeysAndShareOneReplayMemoryOrSetTheirOwn() {
        this.runner
            .withPropertyValues("rpma.server.admission.keys[0].id=1", "rpma.server.admission.keys[0].secret=" + SECRET_1,
                    "rpma.server.endpoints.replica.port=7205", "rpma.server.endpoints.admin.port=7206",
                    "rpma.server.endpoints.admin.admission.keys[0].id=2",
                    "rpma.server.endpoints.admin.admission.keys[0].secret=" + SECRET_2,
                    "rpma.server.endpoints.lenient.port=7207",
                    "rpma.server.endpoints.lenient.admission.max-clock-skew=5m")
            .run((context) -> {
                RpmaProperties properties = context.getBean(RpmaProperties.class);
                assertThat(properties.getEndpoints().get("admin").toString()).doesNotContain(SECRET_2);
                Map<String, RpmaAdmission> steps = RpmaAdmissions.create(properties, List.of());
                assertThat(steps).containsOnlyKeys("default", "replica", "admin", "lenient");
                assertThat(steps.get("replica")).as("same settings, one check").isSameAs(steps.get("default"));
                assertThat(((RpmaTokenAdmission) steps.get("admin")).keyIds()).containsExactly(2);
                assertThat(((RpmaTokenAdmission) steps.get("lenient")).maxClockSkew()).isEqualTo(Duration.ofMinutes(5));
                assertThat(((RpmaTokenAdmission) steps.get("lenient")).keyIds()).containsExactly(1);

                byte[] token = RpmaAdmissionToken.issue(RpmaAdmissionKey.of(1, SECRET_1), HELLO_SERVER);
                assertThat(steps.get("default").admit("default", token).isAdmitted()).isTrue();
                assertThat(steps.get("replica").admit("replica", token).rejectReason())
                    .as("a token admits one connection, on one of the endpoints that share its key")
                    .isEqualTo(RejectReason.UNAUTHENTICATED);
            });
    }

    @Test
    void theApplicationsStepsRunInOrderAfterTheTokenOnWhatItLeaves() {
        List<String> seen = new CopyOnWriteArrayList<>();
        RpmaAdmission first = (endpoint, data) -> {
            seen.add("first " + endpoint + " " + new String(data, StandardCharsets.US_ASCII));
            return RpmaAdmission.Decision.admit(Arrays.copyOf(data, 5));
        };
        RpmaAdmission second = (endpoint, data) -> {
            seen.add("second " + endpoint + " " + new String(data, StandardCharsets.US_ASCII));
            return RpmaAdmission.Decision.ADMIT;
        };
        this.runner.withPropertyValues("rpma.server.admission.keys[0].id=1",
                "rpma.server.admission.keys[0].secret=" + SECRET_1, "rpma.server.endpoints.replica.port=7205",
                "rpma.server.endpoints.replica.admission.keys=")
            .run((context) -> {
                Map<String, RpmaAdmission> steps = RpmaAdmissions.create(context.getBean(RpmaProperties.class),
                        List.of(first, second));
                byte[] token = RpmaAdmissionToken.issue(RpmaAdmissionKey.of(1, SECRET_1), HELLO_SERVER);

                assertThat(steps.get("default").admit("default", token).privateData())
                    .isEqualTo("Hello".getBytes(StandardCharsets.US_ASCII));
                // an empty list of keys: no token on this endpoint, only the application's steps
                assertThat(steps.get("replica").admit("replica", HELLO_SERVER).privateData())
                    .isEqualTo("Hello".getBytes(StandardCharsets.US_ASCII));
                assertThat(seen).containsExactly("first default Hello server!\0", "second default Hello",
                        "first replica Hello server!\0", "second replica Hello");
            });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', textBlock = """
            rpma.server.admission.keys[0].secret     | short-secret      | rpma.server.admission.keys[0].secret | at least 32 bytes (UTF-8), not 12
            rpma.server.admission.keys[0].secret     | ''                | rpma.server.admission.keys[0].secret | at least 32 bytes (UTF-8), not 0
            rpma.server.admission.keys[0].id         | 256               | rpma.server.admission.keys[0].id     | from 0 to 255
            rpma.server.admission.keys[1].id         | 1                 | rpma.server.admission.keys[1].id     | another key has the same id
            rpma.server.admission.keys[2].id         | 3                 | rpma.server.admission.keys           | at most 2 keys are active at once
            rpma.server.admission.max-clock-skew     | 0s                | rpma.server.admission.max-clock-skew | at least 1s
            rpma.server.admission.replay-capacity    | 0                 | rpma.server.admission.replay-capacity | at least 1
            rpma.server.endpoints.replica.admission.keys[0].secret | tiny | rpma.server.endpoints.replica.admission.keys[0].secret | at least 32 bytes
            """)
    void invalidValueIsNamedAndAnalyzedWithoutShowingASecret(String property, String value, String reported,
            String reason) {
        this.runner
            .withPropertyValues("rpma.server.admission.keys[0].id=1", "rpma.server.admission.keys[0].secret=" + SECRET_1,
                    "rpma.server.admission.keys[1].id=2", "rpma.server.admission.keys[1].secret=" + SECRET_2,
                    "rpma.server.endpoints.replica.port=7205", "rpma.server.endpoints.replica.admission.keys[0].id=5",
                    "rpma.server.endpoints.replica.admission.keys[0].secret=" + SECRET_2, property + "=" + value)
            .run((context) -> assertThatExceptionOfType(InvalidRpmaPropertyException.class)
                .isThrownBy(() -> RpmaAdmissions.create(context.getBean(RpmaProperties.class), List.of()))
                .satisfies(RpmaServerSettingsFactoryTests.analyzedAs(reported, reason))
                .satisfies((ex) -> {
                    FailureAnalysis analysis = RpmaFailureAnalyzers.analyze(ex);
                    String shown = ex.getMessage() + analysis.getDescription() + analysis.getAction();
                    assertThat(shown).doesNotContain(SECRET_1).doesNotContain(SECRET_2);
                    if (property.endsWith("secret") && !value.isEmpty()) {
                        assertThat(shown).doesNotContain(value);
                    }
                }));
    }
}
