/**
 * Auto-configuration of the RDMA clients ({@code rpma.client.*}).
 */
@NullMarked
package dev.rpma.spring.boot.autoconfigure.client;

import org.jspecify.annotations.NullMarked;
