/**
 * A client of librpma's example protocols, written with rpma-jna: a library
 * ({@link dev.rpma.client.SampleClient}) and a command line
 * ({@link dev.rpma.client.SampleClientCommand}).
 */
@NullMarked
package dev.rpma.client;

import org.jspecify.annotations.NullMarked;
