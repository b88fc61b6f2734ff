package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

import tools.jackson.databind.json.JsonMapper;

/**
 * JSON message payloads with the application's {@link JsonMapper}, when Jackson is there: message
 * handlers then take and return any type as JSON. Last among the codecs.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(JsonMapper.class)
class RpmaJsonCodecConfiguration {

    @Bean
    @ConditionalOnBean(JsonMapper.class)
    @ConditionalOnMissingBean(name = "rpmaJsonCodec")
    @Order(Ordered.LOWEST_PRECEDENCE)
    RpmaJsonCodec rpmaJsonCodec(JsonMapper jsonMapper) {
        return new RpmaJsonCodec(jsonMapper);
    }
}
