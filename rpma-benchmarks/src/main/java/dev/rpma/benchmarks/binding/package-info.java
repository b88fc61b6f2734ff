/**
 * Benchmarks of the binding: what each typed call costs above the bare JNA call, on the real
 * librpma, with and without a device.
 */
@NullMarked
package dev.rpma.benchmarks.binding;

import org.jspecify.annotations.NullMarked;
