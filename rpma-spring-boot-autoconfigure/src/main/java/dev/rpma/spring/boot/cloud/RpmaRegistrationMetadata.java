package dev.rpma.spring.boot.cloud;

import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.client.discovery.event.InstancePreRegisteredEvent;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.context.ApplicationListener;

import dev.rpma.server.RpmaServer;

/**
 * Puts the address and port of every endpoint of the RDMA server into the instance's service
 * registration metadata ({@link RpmaServiceMetadata}), on the {@link InstancePreRegisteredEvent} that
 * Spring Cloud's auto-registration publishes just before it registers the instance. The event, rather
 * than the registry's own metadata properties, works with any registry that sends the registration's
 * metadata when it registers (Consul, ZooKeeper and the others built on Spring Cloud's
 * {@code AbstractAutoServiceRegistration}). The endpoints are the configured ones: the web server, after
 * which the registration runs, starts before the RDMA server.
 */
final class RpmaRegistrationMetadata implements ApplicationListener<InstancePreRegisteredEvent> {

    private static final Logger logger = LoggerFactory.getLogger(RpmaRegistrationMetadata.class);

    private final RpmaServer server;

    RpmaRegistrationMetadata(RpmaServer server) {
        this.server = server;
    }

    @Override
    public void onApplicationEvent(InstancePreRegisteredEvent event) {
        Registration registration = event.getRegistration();
        Map<String, String> published = RpmaServiceMetadata.of(this.server.settings().endpoints());
        Map<String, String> metadata = registration.getMetadata();
        try {
            if (metadata == null) {
                throw new UnsupportedOperationException("the registration has no metadata");
            }
            metadata.putAll(published);
        }
        catch (UnsupportedOperationException ex) {
            logger.warn("The service registration of '{}' ({}) takes no metadata; RDMA clients cannot find its"
                    + " endpoints unless the registry's own metadata properties publish {}", registration.getServiceId(),
                    registration.getClass().getName(), published);
            return;
        }
        logger.debug("Publishing the RDMA endpoints of '{}' in its registration: {}", registration.getServiceId(),
                published);
    }
}
