/**
 * Benchmarks of the server's data path over a stand-in device that allocates nothing: what the
 * event loop thread allocates and spends per message.
 */
@NullMarked
package dev.rpma.benchmarks.datapath;

import org.jspecify.annotations.NullMarked;
