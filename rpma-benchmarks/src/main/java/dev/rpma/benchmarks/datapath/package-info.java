/**
 * Benchmarks of the server's and the client's data paths over a stand-in that allocates nothing:
 * what the event loop thread allocates and spends per message or request.
 */
@NullMarked
package dev.rpma.benchmarks.datapath;

import org.jspecify.annotations.NullMarked;
