package dev.rpma.server.admission;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Objects;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A key of the admission token: its id, which the token names, and its secret, at least
 * {@value #MIN_SECRET_LENGTH} bytes shared by the server and its clients. Its {@link #toString()}
 * never shows the secret, so that a key in a log line or an exception message gives nothing away.
 */
public final class RpmaAdmissionKey {

    /** Fewest bytes of a secret: as many as HMAC-SHA256's output, below which the key is the weak part. */
    public static final int MIN_SECRET_LENGTH = 32;

    /** The largest id: a token holds it in one byte. */
    public static final int MAX_ID = 255;

    static final String ALGORITHM = "HmacSHA256";

    private final int id;

    private final byte[] secret;

    /**
     * @throws IllegalArgumentException when the id is not 0 to {@value #MAX_ID} or the secret is shorter than
     *     {@value #MIN_SECRET_LENGTH} bytes (the message never shows the secret)
     */
    public RpmaAdmissionKey(int id, byte[] secret) {
        Objects.requireNonNull(secret, "secret");
        if (id < 0 || id > MAX_ID) {
            throw new IllegalArgumentException("A key id is 0 to " + MAX_ID + ", not " + id);
        }
        if (secret.length < MIN_SECRET_LENGTH) {
            throw new IllegalArgumentException("The secret of key " + id + " has " + secret.length + " bytes; it needs at"
                    + " least " + MIN_SECRET_LENGTH);
        }
        this.id = id;
        this.secret = Arrays.copyOf(secret, secret.length);
    }

    /** A key whose secret is the UTF-8 bytes of {@code secret}, as the starter's configuration gives it. */
    public static RpmaAdmissionKey of(int id, String secret) {
        Objects.requireNonNull(secret, "secret");
        return new RpmaAdmissionKey(id, secret.getBytes(StandardCharsets.UTF_8));
    }

    public int id() {
        return this.id;
    }

    /** A new HMAC-SHA256 keyed with the secret; not thread-safe, so one per thread or under a lock. */
    Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(this.secret, ALGORITHM));
            return mac;
        }
        catch (NoSuchAlgorithmException | InvalidKeyException ex) {
            // every Java runtime has HmacSHA256 and takes any key length for it
            throw new IllegalStateException("HmacSHA256 is not available", ex);
        }
    }

    @Override
    public String toString() {
        return "RpmaAdmissionKey[id=" + this.id + ", secret=******]";
    }
}
