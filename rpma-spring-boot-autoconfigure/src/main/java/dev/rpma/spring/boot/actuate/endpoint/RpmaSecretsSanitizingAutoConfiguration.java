package dev.rpma.spring.boot.actuate.endpoint;

import java.util.Locale;

import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Hides the secrets of the admission token's keys, the server's and its clients', in the
 * {@code configprops} and {@code env} actuator endpoints even where their values are shown
 * ({@code management.endpoint.*.show-values}): Spring Boot shows every value it is told to show,
 * whatever its key, unless a {@link SanitizingFunction} says otherwise. Every key under an {@code admission} group that ends with {@code secret} is hidden,
 * however it is spelled ({@code rpma.server.admission.keys[0].secret},
 * {@code RPMA_SERVER_ENDPOINTS_ORDERS_ADMISSION_KEYS_0_SECRET},
 * {@code rpma.client.servers.orders.admission.secret}).
 */
@AutoConfiguration
@ConditionalOnClass(SanitizingFunction.class)
public final class RpmaSecretsSanitizingAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "rpmaSecretsSanitizingFunction")
    SanitizingFunction rpmaSecretsSanitizingFunction() {
        return SanitizingFunction.sanitizeValue().ifKeyMatches(RpmaSecretsSanitizingAutoConfiguration::isAdmissionSecret);
    }

    static boolean isAdmissionSecret(String key) {
        String lower = key.toLowerCase(Locale.ROOT);
        return lower.startsWith("rpma") && lower.contains("admission") && lower.endsWith("secret");
    }
}
