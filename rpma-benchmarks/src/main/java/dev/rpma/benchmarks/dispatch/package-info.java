/**
 * Benchmarks of the dispatch of connection requests to their handlers over the scripted fake:
 * throughput, latency and allocation per request.
 */
@NullMarked
package dev.rpma.benchmarks.dispatch;

import org.jspecify.annotations.NullMarked;
