package dev.rpma.sampleclient;

import org.jspecify.annotations.Nullable;

import dev.rpma.client.RpmaClientException;
import dev.rpma.client.RpmaConnectRejectedException;
import dev.rpma.client.RpmaRequestTimeoutException;
import dev.rpma.client.RpmaServerUnreachableException;

/** A client run that did not get what the protocol promises; {@link #failure()} says how. */
public class SampleClientException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** How a run failed; each has its own exit code on the command line. */
    public enum Failure {

        /** The server rejected the connection request (REJECTED). */
        REJECTED(3),
        /** The server could not be reached (UNREACHABLE, or no RDMA route to it). */
        UNREACHABLE(4),
        /** The connection closed or was lost before the protocol finished, or the client was closed. */
        CONNECTION_LOST(5),
        /** Nothing arrived within the client's timeout. */
        TIMEOUT(6),
        /** The server answered something the protocol does not allow. */
        PROTOCOL(7);

        private final int exitCode;

        Failure(int exitCode) {
            this.exitCode = exitCode;
        }

        public int exitCode() {
            return this.exitCode;
        }

        /** How the {@link dev.rpma.client.RpmaClient} under this client failed. */
        static Failure of(RpmaClientException failure) {
            if (failure instanceof RpmaConnectRejectedException) {
                return REJECTED;
            }
            if (failure instanceof RpmaServerUnreachableException) {
                return UNREACHABLE;
            }
            return (failure instanceof RpmaRequestTimeoutException) ? TIMEOUT : CONNECTION_LOST;
        }
    }

    private final Failure failure;

    public SampleClientException(Failure failure, String message) {
        this(failure, message, null);
    }

    public SampleClientException(Failure failure, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.failure = failure;
    }

    public Failure failure() {
        return this.failure;
    }
}
