package dev.rpma.server;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** {@link String} payloads as UTF-8; a payload that is not valid UTF-8 is out of protocol. */
public final class RpmaStringCodec implements RpmaMessageCodec {

    @Override
    public boolean canDecode(Class<?> type) {
        return type == String.class;
    }

    @Override
    public Object decode(ByteBuffer payload, Class<?> type) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(payload.duplicate()).toString();
        }
        catch (CharacterCodingException ex) {
            throw new RpmaProtocolException("a payload of " + payload.remaining() + " bytes that is not UTF-8 text");
        }
    }

    @Override
    public boolean canEncode(Class<?> type) {
        return type == String.class;
    }

    @Override
    public ByteBuffer encode(Object value, RpmaSession session) {
        byte[] text = ((String) value).getBytes(StandardCharsets.UTF_8);
        ByteBuffer message = session.newMessage();
        if (text.length > message.remaining()) {
            throw new IllegalArgumentException("A reply of " + text.length + " UTF-8 bytes is larger than the endpoint's"
                    + " max-message-size of " + message.remaining() + " bytes");
        }
        return message.put(text).flip();
    }
}
