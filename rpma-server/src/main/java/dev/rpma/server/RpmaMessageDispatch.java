package dev.rpma.server;

/** Where an endpoint's message handlers run. Either way the messages of one session are handled in order. */
public enum RpmaMessageDispatch {

    /**
     * On the session's event loop, which also serves every other session of that loop: the handler
     * must not block. No thread hand-off, no allocation per message.
     */
    LOOP,

    /**
     * On the endpoint's pool of message threads: for handlers that block or take long. A message's
     * receive slot stays taken until its handler returns; replies go back through the loop.
     */
    POOL
}
