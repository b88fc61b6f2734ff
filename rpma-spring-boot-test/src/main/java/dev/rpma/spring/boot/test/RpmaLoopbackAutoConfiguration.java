package dev.rpma.spring.boot.test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.rpma.binding.Rpma;
import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.spring.boot.autoconfigure.client.RpmaClientAutoConfiguration;

/**
 * Puts the application's server and clients on an {@link RpmaLoopback}: its {@link Rpma} is the one
 * they use, so nothing loads librpma or needs a device. Imported by {@link AutoConfigureRpmaLoopback}.
 */
@AutoConfiguration(before = { RpmaAutoConfiguration.class, RpmaClientAutoConfiguration.class })
public final class RpmaLoopbackAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RpmaLoopback rpmaLoopback() {
        return new RpmaLoopback();
    }

    @Bean
    Rpma rpma(RpmaLoopback rpmaLoopback) {
        return rpmaLoopback.rpma();
    }
}
