package dev.rpma.spring.boot.actuate;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.server.RpmaIncomingRequest;

/**
 * The default endpoint's handler in these tests; the request's private data says what it does:
 * {@code accept}, {@code reject}, {@code throw} (an unchecked exception), {@code checked} (an
 * {@link IOException}), {@code block} (signals {@link #blocked}, waits for {@link #release}, then
 * accepts). Anything else is accepted.
 */
public class ScriptedHandler {

    public static final String ACCEPT = "accept";

    public static final String REJECT = "reject";

    public static final String THROW = "throw";

    public static final String CHECKED = "checked";

    public static final String BLOCK = "block";

    /** Counted down when a {@code block} request is being handled. */
    public final CountDownLatch blocked = new CountDownLatch(1);

    /** Lets a {@code block} request go on. */
    public final CountDownLatch release = new CountDownLatch(1);

    @RpmaConnectionHandler
    void handle(RpmaIncomingRequest request) throws Exception {
        String action = new String(request.privateData(), StandardCharsets.US_ASCII);
        switch (action) {
            case REJECT -> request.reject();
            case THROW -> throw new IllegalStateException("scripted failure");
            case CHECKED -> throw new IOException("scripted checked failure");
            case BLOCK -> {
                this.blocked.countDown();
                if (!this.release.await(Await.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("never released");
                }
                request.connect();
            }
            default -> request.connect();
        }
    }

    public static byte[] data(String action) {
        return action.getBytes(StandardCharsets.US_ASCII);
    }
}
