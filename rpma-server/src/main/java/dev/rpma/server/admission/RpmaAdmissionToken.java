package dev.rpma.server.admission;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

import javax.crypto.Mac;

import dev.rpma.binding.RpmaConnectionRequest;

/**
 * The admission token a client puts in front of its private data, and how a client issues one.
 * Version 1 takes {@value #LENGTH} bytes, so that the application's own private data, up to
 * {@value #MAX_APPLICATION_DATA} bytes, still fits in the {@value #MAX_PRIVATE_DATA} bytes a client's
 * connect carries over RoCE and InfiniBand:
 *
 * <pre>
 * offset  bytes  field
 *      0      1  version: 0xA1
 *      1      1  key id: which of the server's keys made the MAC (0 to 255)
 *      2      4  issued at: seconds since 1970-01-01T00:00:00Z, unsigned, big-endian
 *      6      8  nonce: random, so that two tokens of one second differ
 *     14      1  n: how many bytes of application data follow the token
 *     15     16  MAC: the first 16 bytes of HMAC-SHA256(secret, bytes 0 to 14, then the n bytes of data)
 *     31      n  the application's own private data
 * </pre>
 *
 * <p>The MAC covers the application data too, so a token cannot be moved in front of other data;
 * and the length tells the server where that data ends, so the handler sees exactly the bytes the
 * client sent, without the zero padding RoCE may add. A server accepts a token within its maximum
 * clock skew of the time it was issued, and once.
 *
 * <p>A client in C builds the same bytes with OpenSSL's {@code HMAC(EVP_sha256(), ...)} over bytes 0
 * to 14 and the data, copying the first 16 bytes of the result to offset 15.
 */
public final class RpmaAdmissionToken {

    /** The first byte of a version 1 token. */
    public static final byte VERSION = (byte) 0xA1;

    /** Bytes of the token in front of the application data. */
    public static final int LENGTH = 31;

    /** Bytes of the truncated HMAC-SHA256. */
    public static final int MAC_LENGTH = 16;

    /** What a client's connect carries over RoCE and InfiniBand. */
    public static final int MAX_PRIVATE_DATA = RpmaConnectionRequest.MAX_CONNECT_PRIVATE_DATA;

    /** The most application data that fits behind the token. */
    public static final int MAX_APPLICATION_DATA = MAX_PRIVATE_DATA - LENGTH;

    /** The largest issue time a token holds (2106-02-07T06:28:15Z). */
    public static final long MAX_ISSUED_AT = 0xFFFF_FFFFL;

    static final int KEY_ID = 1;

    static final int ISSUED_AT = 2;

    static final int NONCE = 6;

    static final int DATA_LENGTH = 14;

    static final int MAC = 15;

    private static final SecureRandom RANDOM = new SecureRandom();

    private RpmaAdmissionToken() {
    }

    /**
     * The private data of a connect: a token issued now with a random nonce, then {@code applicationData}.
     *
     * @throws IllegalArgumentException when the application data is longer than {@value #MAX_APPLICATION_DATA} bytes
     */
    public static byte[] issue(RpmaAdmissionKey key, byte[] applicationData) {
        return issue(key, Instant.now().getEpochSecond(), RANDOM.nextLong(), applicationData);
    }

    /**
     * The private data of a connect: a token of the given time and nonce, then {@code applicationData}.
     * Each token must have a nonce of its own: the server admits a token once.
     *
     * @param issuedAt seconds since 1970-01-01T00:00:00Z, 0 to {@value #MAX_ISSUED_AT}
     * @throws IllegalArgumentException when the application data is longer than {@value #MAX_APPLICATION_DATA}
     *     bytes or the time does not fit
     */
    public static byte[] issue(RpmaAdmissionKey key, long issuedAt, long nonce, byte[] applicationData) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(applicationData, "applicationData");
        if (applicationData.length > MAX_APPLICATION_DATA) {
            throw new IllegalArgumentException("Application data of " + applicationData.length + " bytes does not fit"
                    + " behind the admission token: a connect carries " + MAX_PRIVATE_DATA + " bytes over RoCE, "
                    + MAX_APPLICATION_DATA + " after the token's " + LENGTH);
        }
        if (issuedAt < 0 || issuedAt > MAX_ISSUED_AT) {
            throw new IllegalArgumentException("The issue time is 0 to " + MAX_ISSUED_AT + " seconds, not " + issuedAt);
        }
        byte[] token = new byte[LENGTH + applicationData.length];
        ByteBuffer.wrap(token).put(VERSION).put((byte) key.id()).putInt((int) issuedAt).putLong(nonce)
            .put((byte) applicationData.length);
        System.arraycopy(applicationData, 0, token, LENGTH, applicationData.length);
        System.arraycopy(mac(key.newMac(), token, applicationData.length), 0, token, MAC, MAC_LENGTH);
        return token;
    }

    /** The truncated MAC of the token at the start of {@code data} and its {@code dataLength} bytes of application data. */
    static byte[] mac(Mac mac, byte[] data, int dataLength) {
        mac.update(data, 0, MAC);
        mac.update(data, LENGTH, dataLength);
        return Arrays.copyOf(mac.doFinal(), MAC_LENGTH);
    }
}
