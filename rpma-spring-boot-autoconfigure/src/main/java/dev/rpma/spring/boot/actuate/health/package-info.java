/**
 * A health indicator per RDMA endpoint: up while it listens, down when it failed, out of service
 * before it starts and after it stops.
 */
@NullMarked
package dev.rpma.spring.boot.actuate.health;

import org.jspecify.annotations.NullMarked;
