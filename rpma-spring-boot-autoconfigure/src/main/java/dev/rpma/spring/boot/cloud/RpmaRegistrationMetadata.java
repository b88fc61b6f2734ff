package dev.rpma.spring.boot.cloud;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.cloud.client.discovery.event.InstancePreRegisteredEvent;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.cloud.zookeeper.discovery.ZookeeperDiscoveryProperties;
import org.springframework.cloud.zookeeper.serviceregistry.ZookeeperRegistration;
import org.springframework.context.ApplicationListener;
import org.springframework.util.ClassUtils;

import dev.rpma.server.RpmaServer;

/**
 * Puts the address and port of every endpoint of the RDMA server into the instance's service
 * registration metadata ({@link RpmaServiceMetadata}), on the {@link InstancePreRegisteredEvent} that
 * Spring Cloud's auto-registration publishes just before it registers the instance. The event, rather
 * than the registry's own metadata properties, works with any registry that sends the registration's
 * metadata when it registers (Consul, ZooKeeper and the others built on Spring Cloud's
 * {@code AbstractAutoServiceRegistration}). The endpoints are the configured ones: the web server, after
 * which the registration runs, starts before the RDMA server.
 *
 * <p>Spring Cloud Zookeeper's registration builds the instance that holds its metadata only when it
 * registers, once it knows its port (built earlier, it fails on the missing port); until then its
 * {@code getMetadata()} is an empty map that takes nothing. Its instance is built from the map of
 * {@code spring.cloud.zookeeper.discovery.metadata}, so the keys go there.
 */
final class RpmaRegistrationMetadata implements ApplicationListener<InstancePreRegisteredEvent> {

    private static final Logger logger = LoggerFactory.getLogger(RpmaRegistrationMetadata.class);

    private static final boolean ZOOKEEPER = ClassUtils.isPresent(
            "org.springframework.cloud.zookeeper.serviceregistry.ZookeeperRegistration",
            RpmaRegistrationMetadata.class.getClassLoader());

    private final RpmaServer server;

    private final BeanFactory beans;

    RpmaRegistrationMetadata(RpmaServer server, BeanFactory beans) {
        this.server = server;
        this.beans = beans;
    }

    @Override
    public void onApplicationEvent(InstancePreRegisteredEvent event) {
        Registration registration = event.getRegistration();
        Map<String, String> published = RpmaServiceMetadata.of(this.server.settings().endpoints());
        Map<String, String> metadata = ZOOKEEPER ? ZooKeeper.metadataBeforeItIsBuilt(registration, this.beans) : null;
        if (metadata == null) {
            metadata = registration.getMetadata();
        }
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

    /** Loaded only when Spring Cloud Zookeeper is on the class path. */
    private static final class ZooKeeper {

        /** The metadata a ZooKeeper registration will be built with, or {@code null} for another registration. */
        static @Nullable Map<String, String> metadataBeforeItIsBuilt(Registration registration, BeanFactory beans) {
            if (!(registration instanceof ZookeeperRegistration)) {
                return null;
            }
            ZookeeperDiscoveryProperties properties = beans.getBeanProvider(ZookeeperDiscoveryProperties.class)
                .getIfAvailable();
            return (properties != null) ? properties.getMetadata() : null;
        }
    }
}
