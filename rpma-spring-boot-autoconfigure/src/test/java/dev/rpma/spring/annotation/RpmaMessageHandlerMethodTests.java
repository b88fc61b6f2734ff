package dev.rpma.spring.annotation;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaProtocolException;
import dev.rpma.server.RpmaSession;
import dev.rpma.server.RpmaSessionState;
import dev.rpma.server.RpmaStringCodec;
import dev.rpma.spring.boot.autoconfigure.RpmaJsonCodec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How a {@link RpmaMessageHandler} method is called: its parameters made from the message and the
 * session in any order, its return value turned into the reply, codecs for other types, and its
 * exceptions passed on as they are.
 */
class RpmaMessageHandlerMethodTests {

    private static final List<RpmaMessageCodec> CODECS = List.of(new RpmaStringCodec(),
            new RpmaJsonCodec(JsonMapper.builder().build()));

    private final TestSession session = new TestSession();

    @Test
    void theMessageAndTheSessionInEitherOrderAndAByteBufferReply() throws Exception {
        Handlers bean = new Handlers();
        ByteBuffer reply = (ByteBuffer) method(bean, "sessionFirst").onMessage(u64(41), this.session);
        assertThat(reply.getLong(0)).isEqualTo(42);
        assertThat(bean.sessions).containsExactly(this.session);
        ByteBuffer again = (ByteBuffer) method(bean, "messageFirst").onMessage(u64(1), this.session);
        assertThat(again.getLong(0)).isEqualTo(2);
    }

    @Test
    void aByteArrayParameterIsACopyAndAByteArrayIsAReply() throws Exception {
        ByteBuffer message = ByteBuffer.wrap(new byte[] { 1, 2, 3 });
        byte[] reply = (byte[]) method(new Handlers(), "bytes").onMessage(message, this.session);
        assertThat(reply).containsExactly(3, 2, 1);
        assertThat(message.array()).as("the receive slot is not touched").containsExactly(1, 2, 3);
    }

    @Test
    void stringsAreUtf8ThroughTheirCodec() throws Exception {
        ByteBuffer reply = (ByteBuffer) method(new Handlers(), "text")
            .onMessage(ByteBuffer.wrap("grüß".getBytes(StandardCharsets.UTF_8)), this.session);
        assertThat(StandardCharsets.UTF_8.decode(reply).toString()).isEqualTo("GRÜSS");
    }

    @Test
    void aPayloadThatIsNotUtf8IsOutOfProtocol() {
        assertThatExceptionOfType(RpmaProtocolException.class)
            .isThrownBy(() -> method(new Handlers(), "text").onMessage(ByteBuffer.wrap(new byte[] { (byte) 0xFF }),
                    this.session))
            .withMessageContaining("not UTF-8");
    }

    @Test
    void otherTypesAreJsonWithJackson() throws Exception {
        ByteBuffer reply = (ByteBuffer) method(new Handlers(), "json")
            .onMessage(ByteBuffer.wrap("{\"item\":\"tea\",\"quantity\":2}".getBytes(StandardCharsets.UTF_8)),
                    this.session);
        assertThat(StandardCharsets.UTF_8.decode(reply).toString()).isEqualTo("{\"item\":\"tea\",\"quantity\":3}");
        assertThatExceptionOfType(RpmaProtocolException.class)
            .isThrownBy(() -> method(new Handlers(), "json").onMessage(ByteBuffer.wrap("{".getBytes()), this.session))
            .withMessageContaining("not a JSON Order");
    }

    @Test
    void anObjectReturnTypeFindsItsCodecByTheValue() throws Exception {
        Object reply = method(new Handlers(), "anything").onMessage(ByteBuffer.allocate(1), this.session);
        assertThat(StandardCharsets.UTF_8.decode((ByteBuffer) reply).toString()).isEqualTo("a string");
    }

    @Test
    void voidAndNullMeanNoReply() throws Exception {
        assertThat(method(new Handlers(), "nothing").onMessage(u64(1), this.session)).isNull();
        assertThat(method(new Handlers(), "staticEcho").onMessage(null, this.session)).isNull();
    }

    @Test
    void exceptionsReachTheServerAsTheyAre() {
        assertThatExceptionOfType(IOException.class)
            .isThrownBy(() -> method(new Handlers(), "checked").onMessage(u64(1), this.session)).withMessage("disk");
        assertThatExceptionOfType(RpmaProtocolException.class)
            .isThrownBy(() -> method(new Handlers(), "protocol").onMessage(u64(1), this.session));
    }

    @Test
    void wrongSignaturesAreRefusedWithTheMethodNamed() {
        assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
            .isThrownBy(() -> method(new Handlers(), "twoPayloads"))
            .withMessageContaining("Handlers.twoPayloads takes the message twice");
        assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
            .isThrownBy(() -> method(new Handlers(), "primitive")).withMessageContaining("parameter of type int");
        assertThatExceptionOfType(RpmaHandlerConfigurationException.class)
            .isThrownBy(() -> method(new Handlers(), "returnsLong")).withMessageContaining("returns a long");
    }

    private static RpmaMessageHandlerMethod method(Object bean, String name) {
        Method method = Arrays.stream(bean.getClass().getDeclaredMethods()).filter((m) -> m.getName().equals(name))
            .findFirst().orElseThrow();
        return new RpmaMessageHandlerMethod(bean, "handlers", method, "default", "", CODECS);
    }

    private static ByteBuffer u64(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value);
    }

    public record Order(String item, int quantity) {
    }

    static class Handlers {

        final List<RpmaSession> sessions = new java.util.ArrayList<>();

        ByteBuffer sessionFirst(RpmaSession session, ByteBuffer message) {
            this.sessions.add(session);
            return session.newMessage().putLong(message.getLong(0) + 1).flip();
        }

        ByteBuffer messageFirst(ByteBuffer message, RpmaSession session) {
            return session.newMessage().putLong(message.getLong(0) + 1).flip();
        }

        byte[] bytes(byte[] message) {
            byte[] reversed = new byte[message.length];
            for (int i = 0; i < message.length; i++) {
                reversed[i] = message[message.length - 1 - i];
            }
            Arrays.fill(message, (byte) 0);
            return reversed;
        }

        String text(String message) {
            return message.toUpperCase(java.util.Locale.ROOT);
        }

        Order json(Order order) {
            return new Order(order.item(), order.quantity() + 1);
        }

        Object anything(ByteBuffer message) {
            return "a string";
        }

        void nothing(ByteBuffer message) {
        }

        static ByteBuffer staticEcho(RpmaSession session) {
            return null;
        }

        void checked(ByteBuffer message) throws IOException {
            throw new IOException("disk");
        }

        void protocol(ByteBuffer message) {
            throw new RpmaProtocolException("no");
        }

        void twoPayloads(ByteBuffer message, byte[] again) {
        }

        void primitive(int value) {
        }

        long returnsLong(ByteBuffer message) {
            return 1;
        }
    }

    /** A session on the heap: newMessage gives a heap buffer, as it does off the session's loop. */
    static final class TestSession implements RpmaSession {

        @Override
        public long id() {
            return 1;
        }

        @Override
        public String endpointName() {
            return "default";
        }

        @Override
        public Map<String, Object> attributes() {
            return Map.of();
        }

        @Override
        public byte[] privateData() {
            return new byte[0];
        }

        @Override
        public long messagesReceived() {
            return 0;
        }

        @Override
        public long messagesSent() {
            return 0;
        }

        @Override
        public RpmaSessionState state() {
            return RpmaSessionState.ESTABLISHED;
        }

        @Override
        public void send(ByteBuffer message) {
        }

        @Override
        public ByteBuffer newMessage() {
            return ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        }

        @Override
        public void close() {
        }
    }
}
