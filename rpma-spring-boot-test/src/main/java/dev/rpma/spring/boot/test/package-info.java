/**
 * Testing RDMA applications without RDMA: {@link dev.rpma.spring.boot.test.RpmaTest},
 * {@link dev.rpma.spring.boot.test.AutoConfigureRpmaLoopback} and the
 * {@link dev.rpma.spring.boot.test.RpmaLoopback} they run on.
 */
@NullMarked
package dev.rpma.spring.boot.test;

import org.jspecify.annotations.NullMarked;
