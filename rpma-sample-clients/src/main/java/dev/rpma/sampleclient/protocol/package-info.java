/**
 * The wire formats of librpma's examples, shared by this project's servers and clients so that
 * both interoperate with the unmodified C programs.
 */
@NullMarked
package dev.rpma.sampleclient.protocol;

import org.jspecify.annotations.NullMarked;
