/**
 * A client of librpma's example protocols, written with rpma-jna: a library
 * ({@link dev.rpma.sampleclient.SampleClient}) and a command line
 * ({@link dev.rpma.sampleclient.SampleClientCommand}).
 */
@NullMarked
package dev.rpma.sampleclient;

import org.jspecify.annotations.NullMarked;
