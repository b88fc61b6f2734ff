/**
 * The clients of the sample's protocols, those of librpma's examples 01-connection, 02-read-to-volatile
 * and 08-messages-ping-pong, written on {@link dev.rpma.client.RpmaClient} in raw mode: a library
 * ({@link dev.rpma.sampleclient.SampleClient}) and a command line
 * ({@link dev.rpma.sampleclient.SampleClientCommand}). The protocols' wire formats are in
 * {@link dev.rpma.sampleclient.protocol}.
 */
@NullMarked
package dev.rpma.sampleclient;

import org.jspecify.annotations.NullMarked;
