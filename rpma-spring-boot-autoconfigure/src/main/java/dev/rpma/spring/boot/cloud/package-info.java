/**
 * Spring Cloud service discovery for RDMA, when Spring Cloud Commons is on the class path: a server
 * instance publishes its endpoints' addresses and ports in its service registration's metadata
 * ({@link dev.rpma.spring.boot.cloud.RpmaServiceMetadata}), and a client configured with a service id
 * finds the instances through the {@code DiscoveryClient} and spreads its connections with Spring Cloud
 * LoadBalancer.
 */
@NullMarked
package dev.rpma.spring.boot.cloud;

import org.jspecify.annotations.NullMarked;
