/** JMH benchmarks: the binding's per-call cost and the starter's dispatch path. */
@NullMarked
package dev.rpma.benchmarks;

import org.jspecify.annotations.NullMarked;
