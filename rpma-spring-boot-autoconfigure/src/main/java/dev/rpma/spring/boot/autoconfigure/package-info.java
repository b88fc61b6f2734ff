/**
 * Auto-configuration of the RDMA server from the {@code rpma.*} properties: its endpoints, event
 * loops and exposed memory regions, its start and stop with the application context, and the
 * failure analyzers that explain why it could not start.
 */
@NullMarked
package dev.rpma.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
