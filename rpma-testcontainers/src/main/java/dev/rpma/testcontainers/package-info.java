/**
 * Testcontainers support for tests over real RDMA: {@link dev.rpma.testcontainers.RdmaDevices} gives
 * any container the host's RDMA devices, the host's network and unlimited locked memory, and
 * {@link dev.rpma.testcontainers.RpmaCClientContainer} runs the project's C clients of librpma's
 * example protocols against a server.
 */
@NullMarked
package dev.rpma.testcontainers;

import org.jspecify.annotations.NullMarked;
