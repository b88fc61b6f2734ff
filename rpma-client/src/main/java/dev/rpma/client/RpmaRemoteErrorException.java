package dev.rpma.client;

/**
 * The server answered a request with an ERROR frame: its handler failed, or no handler has the
 * route. The connection goes on.
 */
public class RpmaRemoteErrorException extends RpmaClientException {

    private static final long serialVersionUID = 1L;

    private final String remoteMessage;

    public RpmaRemoteErrorException(String server, String route, String remoteMessage) {
        super(server, "The server at " + server + " answered the request to route \"" + route + "\" with an error: "
                + remoteMessage, null);
        this.remoteMessage = remoteMessage;
    }

    /** What the server said (escaped). */
    public String remoteMessage() {
        return this.remoteMessage;
    }
}
