package dev.rpma.server.admission;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import javax.crypto.Mac;

import org.jspecify.annotations.Nullable;

import dev.rpma.server.RpmaAdmission;

/**
 * The admission step of the admission token ({@link RpmaAdmissionToken}): a request is admitted when
 * its private data starts with a token whose MAC one of the keys made, whose time is within the
 * maximum clock skew of the server's clock either way, and which was not admitted before; the
 * connection handler then sees the application data behind the token. Anything else is refused as
 * unauthenticated, and a valid token that finds the replay memory full as rate-limited.
 *
 * <p>One or two keys are active at once, so that clients can move from one to the next. MACs are
 * compared in constant time. Thread-safe: endpoints that share an instance share its replay memory,
 * so a token admits one connection on one of them.
 */
public final class RpmaTokenAdmission implements RpmaAdmission {

    /** How far a token's time may be from the server's clock by default, either way. */
    public static final Duration DEFAULT_MAX_CLOCK_SKEW = Duration.ofSeconds(30);

    /** How many admitted tokens are remembered by default (about 100 bytes each). */
    public static final int DEFAULT_REPLAY_CAPACITY = 65536;

    /** Active keys at most: the one clients use, and the one they move to or from. */
    public static final int MAX_KEYS = 2;

    /** What {@link #verify} found. */
    public enum Verdict {
        /** A token of a known key, in time, not seen before: admitted. */
        VALID,
        /** Not a token: too short, another version, or a length that runs past the private data. */
        MALFORMED,
        /** A key id that none of the keys has. */
        UNKNOWN_KEY,
        /** A MAC that the named key did not make: a wrong secret, or changed bytes. */
        FORGED,
        /** Issued longer ago than the maximum clock skew. */
        EXPIRED,
        /** Issued further ahead than the maximum clock skew. */
        NOT_YET_VALID,
        /** Admitted before. */
        REPLAYED,
        /** Valid, but the replay memory is full of tokens still in time. */
        REPLAY_MEMORY_FULL
    }

    private final Object lock = new Object();

    /** The MAC of each key, by key id; under the lock. */
    private final @Nullable Mac[] macs = new Mac[RpmaAdmissionKey.MAX_ID + 1];

    private final List<Integer> keyIds = new ArrayList<>();

    private final long maxSkewSeconds;

    private final int replayCapacity;

    private final Clock clock;

    private final ReplayMemory replays;

    /** Checks tokens of {@code keys} with the default clock skew and replay capacity, on the system clock. */
    public RpmaTokenAdmission(List<RpmaAdmissionKey> keys) {
        this(keys, DEFAULT_MAX_CLOCK_SKEW, DEFAULT_REPLAY_CAPACITY, Clock.systemUTC());
    }

    /**
     * @param keys one or two keys of distinct ids
     * @param maxClockSkew how far a token's time may be from {@code clock}'s, either way; whole seconds, at
     *     least one; a token is remembered as long as it is in time
     * @param replayCapacity how many admitted tokens are remembered at most; when that many are still in
     *     time, further tokens are refused as rate-limited
     * @throws IllegalArgumentException when the keys, the skew or the capacity are not as above
     */
    public RpmaTokenAdmission(List<RpmaAdmissionKey> keys, Duration maxClockSkew, int replayCapacity, Clock clock) {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(maxClockSkew, "maxClockSkew");
        Objects.requireNonNull(clock, "clock");
        if (keys.isEmpty() || keys.size() > MAX_KEYS) {
            throw new IllegalArgumentException("One or " + MAX_KEYS + " keys are active at once, not " + keys.size());
        }
        for (RpmaAdmissionKey key : keys) {
            if (this.macs[key.id()] != null) {
                throw new IllegalArgumentException("Two keys have id " + key.id());
            }
            this.macs[key.id()] = key.newMac();
            this.keyIds.add(key.id());
        }
        if (maxClockSkew.getSeconds() < 1) {
            throw new IllegalArgumentException("The maximum clock skew is at least 1 second, not " + maxClockSkew);
        }
        if (replayCapacity < 1) {
            throw new IllegalArgumentException("The replay capacity is at least 1, not " + replayCapacity);
        }
        this.maxSkewSeconds = maxClockSkew.getSeconds();
        this.replayCapacity = replayCapacity;
        this.clock = clock;
        this.replays = new ReplayMemory(replayCapacity);
    }

    /**
     * Admits a request with a valid token, passing on the application data behind it; refuses the rest
     * as {@link Decision#UNAUTHENTICATED}, or as {@link Decision#RATE_LIMITED} when the replay memory is full.
     */
    @Override
    public Decision admit(String endpoint, byte[] privateData) {
        Verdict verdict = verify(privateData);
        if (verdict == Verdict.VALID) {
            int length = Byte.toUnsignedInt(privateData[RpmaAdmissionToken.DATA_LENGTH]);
            return Decision.admit(
                    Arrays.copyOfRange(privateData, RpmaAdmissionToken.LENGTH, RpmaAdmissionToken.LENGTH + length));
        }
        return (verdict == Verdict.REPLAY_MEMORY_FULL) ? Decision.RATE_LIMITED : Decision.UNAUTHENTICATED;
    }

    /**
     * Checks the token at the start of {@code privateData}, and remembers a valid one so that it is not
     * admitted again.
     */
    public Verdict verify(byte[] privateData) {
        if (privateData.length < RpmaAdmissionToken.LENGTH || privateData[0] != RpmaAdmissionToken.VERSION) {
            return Verdict.MALFORMED;
        }
        int dataLength = Byte.toUnsignedInt(privateData[RpmaAdmissionToken.DATA_LENGTH]);
        if (dataLength > privateData.length - RpmaAdmissionToken.LENGTH) {
            return Verdict.MALFORMED;
        }
        int keyId = Byte.toUnsignedInt(privateData[RpmaAdmissionToken.KEY_ID]);
        ByteBuffer fields = ByteBuffer.wrap(privateData);
        long issuedAt = Integer.toUnsignedLong(fields.getInt(RpmaAdmissionToken.ISSUED_AT));
        long nonce = fields.getLong(RpmaAdmissionToken.NONCE);
        byte[] presented = Arrays.copyOfRange(privateData, RpmaAdmissionToken.MAC,
                RpmaAdmissionToken.MAC + RpmaAdmissionToken.MAC_LENGTH);
        synchronized (this.lock) {
            Mac mac = this.macs[keyId];
            if (mac == null) {
                return Verdict.UNKNOWN_KEY;
            }
            if (!MessageDigest.isEqual(RpmaAdmissionToken.mac(mac, privateData, dataLength), presented)) {
                return Verdict.FORGED;
            }
            long now = Math.floorDiv(this.clock.millis(), 1000L);
            if (issuedAt < now - this.maxSkewSeconds) {
                return Verdict.EXPIRED;
            }
            if (issuedAt > now + this.maxSkewSeconds) {
                return Verdict.NOT_YET_VALID;
            }
            return switch (this.replays.remember(keyId, issuedAt, nonce, issuedAt + this.maxSkewSeconds, now)) {
                case FIRST -> Verdict.VALID;
                case REPLAYED -> Verdict.REPLAYED;
                case FULL -> Verdict.REPLAY_MEMORY_FULL;
            };
        }
    }

    /** The ids of the active keys. */
    public List<Integer> keyIds() {
        return List.copyOf(this.keyIds);
    }

    public Duration maxClockSkew() {
        return Duration.ofSeconds(this.maxSkewSeconds);
    }

    public int replayCapacity() {
        return this.replayCapacity;
    }

    /** Tokens remembered now, for tests and diagnostics. */
    int remembered() {
        synchronized (this.lock) {
            return this.replays.size();
        }
    }

    @Override
    public String toString() {
        // never the secrets
        return "the admission token (key ids " + this.keyIds + ", maximum clock skew " + this.maxSkewSeconds + " s)";
    }
}
