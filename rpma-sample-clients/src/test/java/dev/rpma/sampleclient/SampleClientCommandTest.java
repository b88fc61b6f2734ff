package dev.rpma.sampleclient;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.sampleclient.SampleClientCommand.Invocation;
import dev.rpma.sampleclient.protocol.ExampleProtocols;

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
        assertThatIllegalArgumentException()
            .isThrownBy(() -> Invocation.parse(new String[] { "--client=hello", "--server=198.18.0.1",
                    "--greeting=" + "x".repeat(56) }))
            .withMessageContaining("at most 56 bytes");
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

    @Test
    void helloPrintsTheServersGreetingAndExitsWithZero() throws Exception {
        try (FakeLibRpma fake = new FakeLibRpma().establishOnConnect(false)) {
            Run run = Run.start(fake, "--client=hello", "--server=198.18.0.1");
            FakeConnection connection = awaitConnection(fake);
            connection.privateData(Arrays.copyOf(ExampleProtocols.cString(ExampleProtocols.SERVER_GREETING), 56));
            connection.queueEvent(RpmaConnectionEvent.ESTABLISHED).queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(run.exitCode()).as(run.err()).isEqualTo(SampleClientCommand.OK);
            assertThat(run.out()).isEqualTo("hello: connected to 198.18.0.1:7204 with greeting \"Hello server!\"; the"
                    + " server says \"Hello client!\"\n");
            fake.assertNoViolations();
            fake.assertAllFreed();
        }
    }

    @Test
    void aRejectionExitsWithThreeAndSaysWhy() throws Exception {
        try (FakeLibRpma fake = new FakeLibRpma().establishOnConnect(false)) {
            Run run = Run.start(fake, "--client=hello", "--server=198.18.0.1", "--greeting=Hi");
            awaitConnection(fake).queueEvent(RpmaConnectionEvent.REJECTED);
            assertThat(run.exitCode()).isEqualTo(3);
            assertThat(run.err()).startsWith("hello: REJECTED: ").contains("198.18.0.1:7204");
            fake.assertAllFreed();
        }
    }

    @Test
    void aServerThatEndsTheHoldExitsWithFiveAfterSayingItHolds() throws Exception {
        try (FakeLibRpma fake = new FakeLibRpma().establishOnConnect(false)) {
            Run run = Run.start(fake, "--client=pingpong", "--server=198.18.0.1", "--rounds=0", "--hold=10m");
            FakeConnection connection = awaitConnection(fake);
            connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
            assertThat(fake.await(Duration.ofSeconds(30), () -> run.out().contains("holding the connection"))).isTrue();
            connection.queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(run.exitCode()).isEqualTo(SampleClientException.Failure.CONNECTION_LOST.exitCode());
            assertThat(run.err()).startsWith("pingpong: CONNECTION_LOST: ");
            fake.assertAllFreed();
        }
    }

    @Test
    void noDeviceForTheAddressExitsWithOne() throws Exception {
        try (FakeLibRpma fake = new FakeLibRpma()) {
            fake.failNext("rpma_utils_get_ibv_context", RpmaError.INVAL);
            Run run = Run.start(fake, "--client=read", "--server=198.18.0.1");
            assertThat(run.exitCode()).isEqualTo(SampleClientCommand.FAILED);
            assertThat(run.err()).startsWith("read: ").contains("rpma_utils_get_ibv_context");
            fake.assertAllFreed();
        }
    }

    private static FakeConnection awaitConnection(FakeLibRpma fake) {
        assertThat(fake.await(Duration.ofSeconds(30), () -> !fake.connections().isEmpty())).isTrue();
        return fake.lastConnection();
    }

    /** The command run on another thread, over the fake, with what it prints. */
    private record Run(CompletableFuture<Integer> code, ByteArrayOutputStream outBytes, ByteArrayOutputStream errBytes) {

        static Run start(FakeLibRpma fake, String... args) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() -> SampleClientCommand.run(args,
                    () -> Rpma.using(fake), new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8)));
            return new Run(code, out, err);
        }

        int exitCode() throws Exception {
            return this.code.get(30, TimeUnit.SECONDS);
        }

        String out() {
            return this.outBytes.toString(StandardCharsets.UTF_8);
        }

        String err() {
            return this.errBytes.toString(StandardCharsets.UTF_8);
        }
    }
}
