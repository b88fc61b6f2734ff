package dev.rpma.sampleclient;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.rpma.sampleclient.SampleClientCommand.Invocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SampleClientCommandTest {

    @Test
    void eachProtocolHasItsDefaultPort() {
        assertThat(Invocation.parse(new String[] { "--client=hello", "--server=198.18.0.1" }).port).isEqualTo(7204);
        assertThat(Invocation.parse(new String[] { "--client=read", "--server=198.18.0.1" }).port).isEqualTo(7205);
        assertThat(Invocation.parse(new String[] { "--client=pingpong", "--server=198.18.0.1" }).port).isEqualTo(7206);
    }

    @Test
    void readsEveryOption() {
        Invocation invocation = Invocation.parse(new String[] { "--client=ping-pong", "--rpma.client.server=198.18.3.2",
                "--port=9000", "--rounds=7", "--seed=40", "--hold=1500ms", "--timeout=2m", "--greeting=Hi" });
        assertThat(invocation.protocol).isEqualTo("pingpong");
        assertThat(invocation.server).isEqualTo("198.18.3.2");
        assertThat(invocation.port).isEqualTo(9000);
        assertThat(invocation.rounds).isEqualTo(7);
        assertThat(invocation.seed).isEqualTo(40);
        assertThat(invocation.hold).isEqualTo(Duration.ofMillis(1500));
        assertThat(invocation.timeout).isEqualTo(Duration.ofMinutes(2));
        assertThat(invocation.greeting).isEqualTo("Hi");
    }

    @Test
    void defaultsToTheExamplesGreetingAndAHundredRounds() {
        Invocation invocation = Invocation.parse(new String[] { "--client=pingpong", "--server=198.18.0.1" });
        assertThat(invocation.greeting).isEqualTo("Hello server!");
        assertThat(invocation.rounds).isEqualTo(100);
        assertThat(invocation.hold).isZero();
        assertThat(invocation.timeout).isEqualTo(SampleClient.DEFAULT_TIMEOUT);
    }

    @Test
    void parsesDurationsInSeveralForms() {
        assertThat(Invocation.duration("hold", "30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Invocation.duration("hold", "250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Invocation.duration("hold", "3m")).isEqualTo(Duration.ofMinutes(3));
        assertThat(Invocation.duration("hold", "12")).isEqualTo(Duration.ofSeconds(12));
        assertThat(Invocation.duration("hold", "PT1M")).isEqualTo(Duration.ofMinutes(1));
        assertThatIllegalArgumentException().isThrownBy(() -> Invocation.duration("hold", "soon"))
            .withMessageContaining("--hold");
    }

    @Test
    void refusesWhatItDoesNotUnderstand() {
        assertThatIllegalArgumentException().isThrownBy(() -> Invocation.parse(new String[] { "--server=198.18.0.1" }))
            .withMessageContaining("hello, read or pingpong");
        assertThatIllegalArgumentException().isThrownBy(() -> Invocation.parse(new String[] { "--client=hello" }))
            .withMessageContaining("--server");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> Invocation.parse(new String[] { "--client=hello", "--server=198.18.0.1", "--prot=1" }))
            .withMessageContaining("unknown option --prot");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> Invocation.parse(new String[] { "--client=hello", "--server=198.18.0.1", "--port=70000" }))
            .withMessageContaining("between 1 and 65535");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> Invocation.parse(new String[] { "--client=hello", "--server=198.18.0.1", "extra" }))
            .withMessageContaining("unexpected argument");
    }

    @Test
    void aUsageErrorExitsWithTwoAndPrintsTheUsage() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = SampleClientCommand.run(new String[] { "--client=write", "--server=198.18.0.1" },
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(SampleClientCommand.USAGE);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("got 'write'").contains("usage: --client=");
    }

    @Test
    void isAClientInvocationOnlyWithTheClientOption() {
        assertThat(SampleClientCommand.isClientInvocation(new String[] { "--client=hello" })).isTrue();
        assertThat(SampleClientCommand.isClientInvocation(new String[] { "--rpma.server.address=198.18.0.1" })).isFalse();
        assertThat(SampleClientCommand.isClientInvocation(new String[] { "--clients=3" })).isFalse();
    }

    @Test
    void everyFailureHasItsOwnExitCode() {
        assertThat(SampleClientException.Failure.values()).extracting(SampleClientException.Failure::exitCode)
            .doesNotHaveDuplicates()
            .doesNotContain(SampleClientCommand.OK, SampleClientCommand.FAILED, SampleClientCommand.USAGE);
        assertThat(SampleClientException.Failure.REJECTED.exitCode()).isEqualTo(3);
    }
}
