package dev.rpma.spring.boot.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.rpma.server.RpmaAdmission;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaTokenAdmission;

/**
 * The admission step of each endpoint, from {@code rpma.server.admission} (a named endpoint's own
 * values where it sets them) and the application's {@link RpmaAdmission} beans: the token's check
 * first when the endpoint has keys, then each bean in order on what the token leaves. Endpoints whose
 * token settings are the same share one check, and so one replay memory: a token admits one connection
 * on one of them. Every invalid value fails with {@link InvalidRpmaPropertyException} naming the
 * property, and never showing a secret.
 */
final class RpmaAdmissions {

    private RpmaAdmissions() {
    }

    /** The step of each endpoint that has one, by endpoint name. */
    static Map<String, RpmaAdmission> create(RpmaProperties properties, List<RpmaAdmission> beans) {
        Map<String, RpmaAdmission> admissions = new LinkedHashMap<>();
        Map<TokenSettings, RpmaTokenAdmission> shared = new HashMap<>();
        RpmaProperties.Admission server = properties.getAdmission();
        add(admissions, shared, beans, RpmaEndpointSettings.DEFAULT_ENDPOINT,
                token("rpma.server", server.getKeys(), server.getMaxClockSkew(), server.getReplayCapacity()));
        properties.getEndpoints().forEach((name, endpoint) -> {
            RpmaProperties.EndpointAdmission own = endpoint.admission();
            add(admissions, shared, beans, name,
                    token("rpma.server.endpoints." + name, RpmaServerSettingsFactory.inherit(own.keys(), server.getKeys()),
                            RpmaServerSettingsFactory.inherit(own.maxClockSkew(), server.getMaxClockSkew()),
                            RpmaServerSettingsFactory.inherit(own.replayCapacity(), server.getReplayCapacity())));
        });
        return admissions;
    }

    private static void add(Map<String, RpmaAdmission> admissions, Map<TokenSettings, RpmaTokenAdmission> shared,
            List<RpmaAdmission> beans, String endpoint, @Nullable TokenSettings token) {
        RpmaAdmission admission = (token != null) ? shared.computeIfAbsent(token, TokenSettings::newAdmission) : null;
        for (RpmaAdmission bean : beans) {
            admission = (admission != null) ? admission.andThen(bean) : bean;
        }
        if (admission != null) {
            admissions.put(endpoint, admission);
        }
    }

    /** The validated token settings of an endpoint, or {@code null} when it has no keys. */
    private static @Nullable TokenSettings token(String prefix, @Nullable List<RpmaProperties.AdmissionKey> keys,
            @Nullable Duration maxClockSkew, int replayCapacity) {
        String property = prefix + ".admission";
        if (keys == null || keys.isEmpty()) {
            return null;
        }
        if (keys.size() > RpmaTokenAdmission.MAX_KEYS) {
            // the count, never the keys
            throw new InvalidRpmaPropertyException(property + ".keys", keys.size() + " keys", "at most "
                    + RpmaTokenAdmission.MAX_KEYS + " keys are active at once: the one clients use and the one they move"
                    + " to (or from)", "Remove the key no client uses any more from '" + property + ".keys'");
        }
        Set<Integer> ids = new HashSet<>();
        for (int i = 0; i < keys.size(); i++) {
            RpmaProperties.AdmissionKey key = keys.get(i);
            String at = property + ".keys[" + i + "]";
            Integer id = key.id();
            if (id == null || id < 0 || id > RpmaAdmissionKey.MAX_ID) {
                throw new InvalidRpmaPropertyException(at + ".id", id, "must be set, from 0 to " + RpmaAdmissionKey.MAX_ID);
            }
            if (!ids.add(id)) {
                throw new InvalidRpmaPropertyException(at + ".id", id, "another key has the same id; give each its own");
            }
            String secret = key.secret();
            int length = (secret != null) ? secret.getBytes(StandardCharsets.UTF_8).length : 0;
            if (length < RpmaAdmissionKey.MIN_SECRET_LENGTH) {
                // the value is left out on purpose: a secret never goes into a message
                throw new InvalidRpmaPropertyException(at + ".secret", null, "must be at least "
                        + RpmaAdmissionKey.MIN_SECRET_LENGTH + " bytes (UTF-8), not " + length,
                        "Give key " + id + " a longer secret, for instance the output of 'openssl rand -base64 48', in '"
                                + at + ".secret' (and the same secret to its clients)");
            }
        }
        if (maxClockSkew == null || maxClockSkew.getSeconds() < 1) {
            throw new InvalidRpmaPropertyException(property + ".max-clock-skew", maxClockSkew, "must be at least 1s");
        }
        if (replayCapacity < 1) {
            throw new InvalidRpmaPropertyException(property + ".replay-capacity", replayCapacity, "must be at least 1");
        }
        return new TokenSettings(List.copyOf(keys), maxClockSkew, replayCapacity);
    }

    /**
     * What an endpoint's token check is made of, validated: equal for endpoints that inherit the same values
     * (the secrets compared too), which then share one check. Its {@code toString()} hides the secrets, as
     * {@link RpmaProperties.AdmissionKey}'s does.
     */
    private record TokenSettings(List<RpmaProperties.AdmissionKey> keys, Duration maxClockSkew, int replayCapacity) {

        RpmaTokenAdmission newAdmission() {
            List<RpmaAdmissionKey> parsed = new ArrayList<>();
            for (RpmaProperties.AdmissionKey key : this.keys) {
                parsed.add(RpmaAdmissionKey.of(key.id(), key.secret()));
            }
            return new RpmaTokenAdmission(parsed, this.maxClockSkew, this.replayCapacity, Clock.systemUTC());
        }
    }
}
