package dev.rpma.client;

import java.time.Duration;

/**
 * No reply came within the request timeout. The request may still reach the server and be handled;
 * its reply, if one comes later, is dropped.
 */
public class RpmaRequestTimeoutException extends RpmaClientException {

    private static final long serialVersionUID = 1L;

    public RpmaRequestTimeoutException(String server, String what, Duration timeout) {
        super(server, "No reply from " + server + " to " + what + " within " + timeout
                + "; a reply that comes later is dropped", null);
    }
}
