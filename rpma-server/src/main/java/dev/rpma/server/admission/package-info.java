/**
 * The admission token: a short proof, in front of a client's private data, that the client holds
 * a key the server is configured with. {@link dev.rpma.server.admission.RpmaAdmissionToken} issues
 * it (for clients) and describes it byte by byte; {@link dev.rpma.server.admission.RpmaTokenAdmission}
 * checks it as an endpoint's {@link dev.rpma.server.RpmaAdmission} step.
 */
@NullMarked
package dev.rpma.server.admission;

import org.jspecify.annotations.NullMarked;
