/** JMH benchmarks: the binding's per-call cost and the starter's dispatch path. */
package dev.rpma.benchmarks;
