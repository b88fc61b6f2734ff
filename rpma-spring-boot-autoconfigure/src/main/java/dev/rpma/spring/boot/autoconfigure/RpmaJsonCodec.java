package dev.rpma.spring.boot.autoconfigure;

import java.nio.ByteBuffer;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.util.ByteBufferBackedInputStream;

import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaProtocolException;
import dev.rpma.server.RpmaSession;

/** Payloads as JSON, read and written by a Jackson {@link JsonMapper}; a payload that is not JSON is out of protocol. */
public class RpmaJsonCodec implements RpmaMessageCodec {

    private final JsonMapper mapper;

    public RpmaJsonCodec(JsonMapper mapper) {
        this.mapper = mapper;
    }

    @Override
    public boolean canDecode(Class<?> type) {
        return !type.isPrimitive() && type != ByteBuffer.class && type != byte[].class && type != RpmaSession.class;
    }

    @Override
    public Object decode(ByteBuffer payload, Class<?> type) {
        try {
            return this.mapper.readValue(new ByteBufferBackedInputStream(payload.duplicate()), type);
        }
        catch (JacksonException ex) {
            throw new RpmaProtocolException("a payload that is not a JSON " + type.getSimpleName() + ": "
                    + ex.getOriginalMessage());
        }
    }

    @Override
    public boolean canEncode(Class<?> type) {
        return canDecode(type);
    }

    @Override
    public ByteBuffer encode(Object value, RpmaSession session) {
        byte[] json = this.mapper.writeValueAsBytes(value);
        ByteBuffer message = session.newMessage();
        if (json.length > message.remaining()) {
            throw new IllegalArgumentException("A reply of " + json.length + " bytes of JSON is larger than the endpoint's"
                    + " max-message-size of " + message.remaining() + " bytes");
        }
        return message.put(json).flip();
    }
}
