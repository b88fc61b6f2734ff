package dev.rpma.server;

/** How the bytes of a message travel on an endpoint's connections. */
public enum RpmaWireMode {

    /**
     * A message is the bytes of one receive, as clients written against librpma alone send them; the
     * application's protocol governs how many are in flight (at most the endpoint's receive slots).
     */
    RAW,

    /**
     * The starter's framing (docs/wire-protocol.md): a 16-byte header carries the kind of message, a
     * request id that correlates a reply with its request, the route that selects the handler, the
     * length, and credits, so that a sender never sends a message the receiver has no receive posted for.
     */
    FRAMED
}
