package dev.rpma.sampleclient;

import dev.rpma.binding.RpmaConnectionEvent;

/** A client run that did not get what the protocol promises; {@link #failure()} says how. */
public class SampleClientException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** How a run failed; each has its own exit code on the command line. */
    public enum Failure {

        /** The server rejected the connection request (the client saw REJECTED). */
        REJECTED(3),
        /** The server could not be reached (UNREACHABLE). */
        UNREACHABLE(4),
        /** The connection closed or was lost before the protocol finished. */
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

        static Failure of(RpmaConnectionEvent event) {
            return switch (event) {
                case REJECTED -> REJECTED;
                case UNREACHABLE -> UNREACHABLE;
                default -> CONNECTION_LOST;
            };
        }
    }

    private final Failure failure;

    public SampleClientException(Failure failure, String message) {
        super(message);
        this.failure = failure;
    }

    public Failure failure() {
        return this.failure;
    }
}
