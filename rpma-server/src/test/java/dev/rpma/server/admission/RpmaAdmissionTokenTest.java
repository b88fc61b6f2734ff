package dev.rpma.server.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

/**
 * The token's bytes. The known answers were computed apart from this code, with Python's
 * {@code hmac} module over the layout the class documents:
 * {@code head = bytes([0xA1, key_id]) + struct.pack('>IQ', issued_at, nonce) + bytes([len(data)])},
 * {@code token = head + hmac.new(secret, head + data, hashlib.sha256).digest()[:16] + data}.
 */
class RpmaAdmissionTokenTest {

    static final String SECRET_1 = "rpma-admission-test-secret-0123456789";

    static final String SECRET_2 = "another-secret-for-the-second-key-7";

    static final RpmaAdmissionKey KEY_1 = RpmaAdmissionKey.of(1, SECRET_1);

    static final RpmaAdmissionKey KEY_2 = RpmaAdmissionKey.of(2, SECRET_2);

    static final long ISSUED_AT = 1_700_000_000L;

    static final long NONCE = 0x0102030405060708L;

    static final byte[] HELLO_SERVER = "Hello server!\0".getBytes(StandardCharsets.US_ASCII);

    @Test
    void knownAnswerWithTheSampleGreetingBehindTheToken() {
        byte[] token = RpmaAdmissionToken.issue(KEY_1, ISSUED_AT, NONCE, HELLO_SERVER);

        assertThat(HexFormat.of().formatHex(token)).isEqualTo("a1016553f1000102030405060708" + "0e"
                + "b00a411fc858a950cdd45e914af6ea3e" + "48656c6c6f207365727665722100");
        assertThat(token).hasSize(45);
    }

    @Test
    void knownAnswerWithoutApplicationData() {
        byte[] token = RpmaAdmissionToken.issue(KEY_1, ISSUED_AT, NONCE, new byte[0]);

        assertThat(HexFormat.of().formatHex(token))
            .isEqualTo("a1016553f1000102030405060708" + "00" + "6b324f5893d0dd51c592739eef2da2c9");
        assertThat(token).hasSize(RpmaAdmissionToken.LENGTH);
    }

    @Test
    void knownAnswerAtTheLargestTimeAndNonce() {
        byte[] token = RpmaAdmissionToken.issue(KEY_2, RpmaAdmissionToken.MAX_ISSUED_AT, -1L, new byte[] { 'x' });

        assertThat(HexFormat.of().formatHex(token)).isEqualTo("a102ffffffffffffffffffffffff01"
                + "9dcbb987a62583a9ac82ff28f1bca295" + "78");
    }

    @Test
    void tokenAndApplicationDataFitWhatAConnectCarriesOverRoce() {
        assertThat(RpmaAdmissionToken.MAX_PRIVATE_DATA).isEqualTo(56);
        assertThat(RpmaAdmissionToken.MAX_APPLICATION_DATA).isEqualTo(25);
        assertThat(RpmaAdmissionToken.issue(KEY_1, new byte[25])).hasSize(56);
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaAdmissionToken.issue(KEY_1, new byte[26]))
            .withMessageContaining("56 bytes over RoCE");
    }

    @Test
    void theIssueTimeMustFitItsFourBytes() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> RpmaAdmissionToken.issue(KEY_1, RpmaAdmissionToken.MAX_ISSUED_AT + 1, NONCE, new byte[0]));
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaAdmissionToken.issue(KEY_1, -1, NONCE, new byte[0]));
    }

    @Test
    void tokensIssuedNowCarryTheTimeAndARandomNonce() {
        long before = Instant.now().getEpochSecond();
        byte[] first = RpmaAdmissionToken.issue(KEY_1, HELLO_SERVER);
        byte[] second = RpmaAdmissionToken.issue(KEY_1, HELLO_SERVER);
        long after = Instant.now().getEpochSecond();

        long issuedAt = Integer.toUnsignedLong(ByteBuffer.wrap(first).getInt(2));
        assertThat(issuedAt).isBetween(before, after);
        assertThat(Arrays.copyOfRange(first, 6, 14)).isNotEqualTo(Arrays.copyOfRange(second, 6, 14));
    }

    @Test
    void keysRefuseShortSecretsAndIdsOutOfAByteWithoutShowingTheSecret() {
        String shortSecret = "only-thirty-one-bytes-long-xxxx";
        assertThat(shortSecret).hasSize(31);
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaAdmissionKey.of(1, shortSecret))
            .withMessageContaining("31 bytes")
            .withMessageContaining("at least 32")
            .withMessageNotContaining(shortSecret);
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaAdmissionKey.of(256, SECRET_1));
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaAdmissionKey.of(-1, SECRET_1));
        assertThat(RpmaAdmissionKey.of(255, SECRET_1).id()).isEqualTo(255);
    }

    @Test
    void aKeyNeverShowsItsSecret() {
        assertThat(KEY_1.toString()).isEqualTo("RpmaAdmissionKey[id=1, secret=******]").doesNotContain(SECRET_1);
    }
}
