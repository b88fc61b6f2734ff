package dev.rpma.server.admission;

import static dev.rpma.server.admission.RpmaAdmissionTokenTest.HELLO_SERVER;
import static dev.rpma.server.admission.RpmaAdmissionTokenTest.ISSUED_AT;
import static dev.rpma.server.admission.RpmaAdmissionTokenTest.KEY_1;
import static dev.rpma.server.admission.RpmaAdmissionTokenTest.KEY_2;
import static dev.rpma.server.admission.RpmaAdmissionTokenTest.NONCE;
import static dev.rpma.server.admission.RpmaAdmissionTokenTest.SECRET_1;
import static dev.rpma.server.admission.RpmaAdmissionTokenTest.SECRET_2;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaAdmission;
import dev.rpma.server.admission.RpmaTokenAdmission.Verdict;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

/**
 * The checks of the admission token against a clock the test moves: the known answer, clock skew
 * both ways, expiry, replay within the window and a bounded memory, rotation between two keys, wrong
 * keys, and every way bytes can be wrong.
 */
class RpmaTokenAdmissionTest {

    private static final Duration SKEW = Duration.ofSeconds(30);

    private final MutableClock clock = new MutableClock(ISSUED_AT);

    private RpmaTokenAdmission admission(RpmaAdmissionKey... keys) {
        return new RpmaTokenAdmission(List.of(keys), SKEW, 1000, this.clock);
    }

    private static byte[] token(RpmaAdmissionKey key, long issuedAt, long nonce) {
        return RpmaAdmissionToken.issue(key, issuedAt, nonce, HELLO_SERVER);
    }

    @Test
    void theKnownAnswerIsAdmittedAndTheHandlerSeesTheGreetingBehindIt() {
        byte[] known = HexFormat.of().parseHex("a1016553f1000102030405060708" + "0e" + "b00a411fc858a950cdd45e914af6ea3e"
                + "48656c6c6f207365727665722100");

        RpmaAdmission.Decision decision = admission(KEY_1).admit("default", known);

        assertThat(decision.isAdmitted()).isTrue();
        assertThat(decision.privateData()).isEqualTo(HELLO_SERVER);
    }

    @Test
    void roceZeroPaddingBehindTheDataIsNotPassedOn() {
        byte[] padded = Arrays.copyOf(token(KEY_1, ISSUED_AT, NONCE), RpmaAdmissionToken.MAX_PRIVATE_DATA);

        assertThat(admission(KEY_1).admit("default", padded).privateData()).isEqualTo(HELLO_SERVER);
    }

    @Test
    void aTokenWithoutApplicationDataPassesOnNothing() {
        byte[] token = RpmaAdmissionToken.issue(KEY_1, ISSUED_AT, NONCE, new byte[0]);

        assertThat(admission(KEY_1).admit("default", token).privateData()).isEmpty();
    }

    @Test
    void aTokenIsInTimeWithinTheSkewEitherWayAndNotASecondMore() {
        RpmaTokenAdmission admission = admission(KEY_1);

        assertThat(admission.verify(token(KEY_1, ISSUED_AT - 30, 1))).isEqualTo(Verdict.VALID);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT - 31, 2))).isEqualTo(Verdict.EXPIRED);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT + 30, 3))).isEqualTo(Verdict.VALID);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT + 31, 4))).isEqualTo(Verdict.NOT_YET_VALID);
    }

    @Test
    void theServerClockCountsWholeSeconds() {
        RpmaTokenAdmission admission = admission(KEY_1);
        // 999 ms into the second after the window still counts as its last second
        this.clock.setMillis((ISSUED_AT + 30) * 1000 + 999);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT, 1))).isEqualTo(Verdict.VALID);
        this.clock.setMillis((ISSUED_AT + 31) * 1000);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT, 2))).isEqualTo(Verdict.EXPIRED);
    }

    @Test
    void aTokenIsAdmittedOnceAndItsReplayRefusedAsUnauthenticated() {
        RpmaTokenAdmission admission = admission(KEY_1);
        byte[] token = token(KEY_1, ISSUED_AT, NONCE);

        assertThat(admission.admit("default", token).isAdmitted()).isTrue();
        assertThat(admission.verify(token)).isEqualTo(Verdict.REPLAYED);
        this.clock.advanceSeconds(30);
        assertThat(admission.admit("default", token).rejectReason()).isEqualTo(RejectReason.UNAUTHENTICATED);
        // another nonce of the same second is another token
        assertThat(admission.verify(token(KEY_1, ISSUED_AT, NONCE + 1))).isEqualTo(Verdict.VALID);
    }

    @Test
    void aReplayAfterTheWindowIsExpiredAndTheMemoryHasForgottenIt() {
        RpmaTokenAdmission admission = admission(KEY_1);
        byte[] token = token(KEY_1, ISSUED_AT, NONCE);
        assertThat(admission.verify(token)).isEqualTo(Verdict.VALID);
        assertThat(admission.remembered()).isOne();

        this.clock.advanceSeconds(31);
        assertThat(admission.verify(token)).isEqualTo(Verdict.EXPIRED);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT + 31, NONCE))).isEqualTo(Verdict.VALID);
        assertThat(admission.remembered()).as("the expired token forgotten, the new one remembered").isOne();
    }

    @Test
    void aFullReplayMemoryRefusesNewTokensAsRateLimitedUntilItsTokensExpire() {
        RpmaTokenAdmission admission = new RpmaTokenAdmission(List.of(KEY_1), SKEW, 2, this.clock);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT, 1))).isEqualTo(Verdict.VALID);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT, 2))).isEqualTo(Verdict.VALID);

        assertThat(admission.verify(token(KEY_1, ISSUED_AT, 3))).isEqualTo(Verdict.REPLAY_MEMORY_FULL);
        assertThat(admission.admit("default", token(KEY_1, ISSUED_AT, 4)).rejectReason())
            .isEqualTo(RejectReason.RATE_LIMITED);
        // a replay is still a replay when the memory is full
        assertThat(admission.verify(token(KEY_1, ISSUED_AT, 1))).isEqualTo(Verdict.REPLAYED);
        assertThat(admission.remembered()).isEqualTo(2);

        this.clock.advanceSeconds(31);
        assertThat(admission.verify(token(KEY_1, ISSUED_AT + 31, 5))).isEqualTo(Verdict.VALID);
        assertThat(admission.remembered()).isOne();
    }

    @Test
    void twoActiveKeysLetClientsMoveFromOneToTheNext() {
        // before: key 1; during the rotation: keys 1 and 2; after: key 2
        RpmaTokenAdmission before = admission(KEY_1);
        RpmaTokenAdmission during = admission(KEY_1, KEY_2);
        RpmaTokenAdmission after = admission(KEY_2);

        assertThat(before.verify(token(KEY_2, ISSUED_AT, 1))).isEqualTo(Verdict.UNKNOWN_KEY);
        assertThat(during.verify(token(KEY_1, ISSUED_AT, 2))).isEqualTo(Verdict.VALID);
        assertThat(during.verify(token(KEY_2, ISSUED_AT, 3))).isEqualTo(Verdict.VALID);
        assertThat(after.verify(token(KEY_1, ISSUED_AT, 4))).isEqualTo(Verdict.UNKNOWN_KEY);
        assertThat(after.verify(token(KEY_2, ISSUED_AT, 5))).isEqualTo(Verdict.VALID);
        assertThat(during.keyIds()).containsExactly(1, 2);
    }

    @Test
    void aTokenOfAnotherSecretUnderAKnownIdIsForged() {
        RpmaAdmissionKey impostor = RpmaAdmissionKey.of(1, SECRET_2);

        assertThat(admission(KEY_1).verify(token(impostor, ISSUED_AT, NONCE))).isEqualTo(Verdict.FORGED);
        assertThat(admission(KEY_1).admit("default", token(impostor, ISSUED_AT, NONCE)).rejectReason())
            .isEqualTo(RejectReason.UNAUTHENTICATED);
    }

    @Test
    void everyChangedByteOfATokenOrItsDataIsRefused() {
        byte[] token = token(KEY_1, ISSUED_AT, NONCE);
        for (int i = 0; i < token.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] changed = token.clone();
                changed[i] ^= (byte) (1 << bit);
                // a fresh admission each time: a refusal must come from the bytes, not from the replay memory
                assertThat(admission(KEY_1).verify(changed)).as("byte %d bit %d", i, bit).isNotEqualTo(Verdict.VALID);
            }
        }
        assertThat(admission(KEY_1).verify(token)).isEqualTo(Verdict.VALID);
    }

    @Test
    void truncatedOrShortenedTokensAreMalformed() {
        RpmaTokenAdmission admission = admission(KEY_1);
        byte[] token = token(KEY_1, ISSUED_AT, NONCE);
        for (int length = 0; length < RpmaAdmissionToken.LENGTH + HELLO_SERVER.length; length++) {
            assertThat(admission.verify(Arrays.copyOf(token, length))).as("%d bytes", length)
                .isEqualTo(Verdict.MALFORMED);
        }
        byte[] greeting = HELLO_SERVER;
        assertThat(admission.verify(greeting)).as("an application's own private data, no token")
            .isEqualTo(Verdict.MALFORMED);
        assertThat(admission.admit("default", new byte[0]).rejectReason()).isEqualTo(RejectReason.UNAUTHENTICATED);
        assertThat(admission.remembered()).isZero();
    }

    @Property(tries = 500)
    void arbitraryBytesAreNeverAdmitted(@ForAll @Size(max = 56) byte[] garbage) {
        RpmaTokenAdmission admission = new RpmaTokenAdmission(List.of(KEY_1), SKEW, 10, new MutableClock(ISSUED_AT));

        assertThat(admission.admit("default", garbage).isAdmitted()).isFalse();
    }

    @Test
    void oneOrTwoKeysOfDistinctIdsAndAWindowOfAtLeastASecond() {
        assertThatIllegalArgumentException().isThrownBy(() -> admission()).withMessageContaining("not 0");
        RpmaAdmissionKey third = RpmaAdmissionKey.of(3, SECRET_1);
        assertThatIllegalArgumentException().isThrownBy(() -> admission(KEY_1, KEY_2, third))
            .withMessageContaining("not 3");
        assertThatIllegalArgumentException().isThrownBy(() -> admission(KEY_1, RpmaAdmissionKey.of(1, SECRET_2)))
            .withMessageContaining("Two keys have id 1");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> new RpmaTokenAdmission(List.of(KEY_1), Duration.ofMillis(999), 10, this.clock));
        assertThatIllegalArgumentException()
            .isThrownBy(() -> new RpmaTokenAdmission(List.of(KEY_1), SKEW, 0, this.clock));
    }

    @Test
    void itsDescriptionNamesTheKeyIdsAndNeverTheSecrets() {
        String description = admission(KEY_1, KEY_2).toString();

        assertThat(description).contains("[1, 2]").contains("30 s").doesNotContain(SECRET_1).doesNotContain(SECRET_2);
    }
}
