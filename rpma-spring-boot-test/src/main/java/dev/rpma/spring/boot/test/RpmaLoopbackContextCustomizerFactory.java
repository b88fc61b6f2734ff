package dev.rpma.spring.boot.test;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Gives a test under {@link AutoConfigureRpmaLoopback} a listen address when the application has none:
 * on the loopback any address works, so a test need not configure one. The application's own address,
 * when it has one, wins (the property source is the last one looked at).
 */
final class RpmaLoopbackContextCustomizerFactory implements ContextCustomizerFactory {

    /** TEST-NET-1 (RFC 5737): an address that is valid to the starter's checks and reaches no network. */
    static final String DEFAULT_ADDRESS = "192.0.2.1";

    @Override
    public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
            List<ContextConfigurationAttributes> configAttributes) {
        return TestContextAnnotationUtils.hasAnnotation(testClass, AutoConfigureRpmaLoopback.class)
                ? new DefaultAddress() : null;
    }

    private static final class DefaultAddress implements ContextCustomizer {

        @Override
        public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
            context.getEnvironment().getPropertySources().addLast(new MapPropertySource("rpmaLoopbackAddress",
                    Map.of("rpma.server.address", DEFAULT_ADDRESS)));
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof DefaultAddress;
        }

        @Override
        public int hashCode() {
            return DefaultAddress.class.hashCode();
        }
    }
}
