package dev.rpma.spring.boot.autoconfigure.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.StringUtils;

import dev.rpma.client.RpmaClientBuilder;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;
import dev.rpma.spring.boot.autoconfigure.InvalidRpmaPropertyException;

/**
 * RDMA clients: one {@code RpmaClient} bean per server under {@code rpma.client.servers.<name>}.
 */
@ConfigurationProperties("rpma.client")
public class RpmaClientProperties {

    /**
     * Servers to call, by name: an RpmaClient bean each, named after the server with the suffix RpmaClient
     * (orders: ordersRpmaClient) and qualified with the server's name (@Qualifier("orders")).
     */
    private final Map<String, Server> servers = new LinkedHashMap<>();

    /**
     * Whether each request is an Observation (rpma.client.requests) when an ObservationRegistry is
     * present; with a tracer, its trace context goes to the server in the frame header.
     */
    private boolean observationEnabled = true;

    public Map<String, Server> getServers() {
        return this.servers;
    }

    public boolean isObservationEnabled() {
        return this.observationEnabled;
    }

    public void setObservationEnabled(boolean observationEnabled) {
        this.observationEnabled = observationEnabled;
    }

    /** One server's client: where it is (an address, or a service id), its pool, its timeouts, its slots and its back-off. */
    public static class Server {

        /** IP address of the server, reachable over RDMA; either this or service-id. */
        private @Nullable String address;

        /** Port of the server's endpoint. */
        private int port = 7204;

        /**
         * Service id of the servers in the service registry (Spring Cloud DiscoveryClient), in place of address
         * and port: the connections spread over its instances that publish the endpoint.
         */
        private @Nullable String serviceId;

        /** With service-id: the servers' endpoint whose address and port the instances publish in their metadata. */
        private String endpoint = "default";

        /**
         * Private data of each connection request, as UTF-8 text (at most 56 bytes, or 25 behind an admission
         * token).
         */
        private String privateData = "";

        /** Admission token that each connection request presents to a server with token admission. */
        private final Admission admission = new Admission();

        /** Connections kept open to the server. */
        private int poolSize = 1;

        /** Longest wait for a connection to be established. */
        private Duration connectTimeout = Duration.ofSeconds(5);

        /** Longest wait for a reply. */
        private Duration requestTimeout = Duration.ofSeconds(10);

        /** Receives posted per connection, at least 3 in framed mode and 2 in raw mode. */
        private int receiveSlots = 16;

        /** Sends in flight per connection, at most 64. */
        private int sendSlots = 16;

        /** Largest payload sent or received; as the server's max-message-size. */
        private int maxMessageSize = 4096;

        /** The server's wire mode. */
        private RpmaWireMode mode = RpmaWireMode.FRAMED;

        /** Raw mode: exchanges awaiting their reply per connection, at most. */
        private int rawWindow = 1;

        /** One-sided operations in flight per connection, at most; more wait. */
        private int oneSidedDepth = 16;

        /** How often an idempotent request is sent again after its connection was lost. */
        private int maxRetries = 1;

        /** Wait before the first attempt to connect again after a failure. */
        private Duration backoffInitial = Duration.ofMillis(100);

        /** Factor by which the wait grows after each failure in a row. */
        private double backoffMultiplier = 2.0;

        /** Longest wait between attempts. */
        private Duration backoffMax = Duration.ofSeconds(10);

        /** Event loops of the client's connections. */
        private int eventLoops = 1;

        /**
         * How long a loop keeps polling after work before it sleeps; 0 sleeps as soon as its completion queues
         * are empty.
         */
        private Duration busyPoll = Duration.ZERO;

        /**
         * Applies these settings to {@code builder}: all but service-id, whose servers only a
         * {@link RpmaServiceDiscovery} finds.
         *
         * @throws InvalidRpmaPropertyException when both or neither of address and service-id are set, or the
         *     admission key is incomplete or invalid (the message never shows the secret)
         */
        public RpmaClientBuilder applyTo(RpmaClientBuilder builder, String name) {
            String prefix = "rpma.client.servers." + name;
            boolean located = StringUtils.hasText(this.serviceId);
            if (StringUtils.hasText(this.address) == located) {
                throw located ? new InvalidRpmaPropertyException(prefix + ".service-id", this.serviceId,
                        "is set together with " + prefix + ".address (" + this.address + "); a client calls either one"
                                + " address or the instances of a service",
                        "Remove " + prefix + ".address or " + prefix + ".service-id")
                        : new InvalidRpmaPropertyException(prefix + ".address", null, "is not set, nor is "
                                + prefix + ".service-id: set the IP address of the server, reachable over RDMA, or the"
                                + " service id of its instances in the service registry");
            }
            if (!located) {
                builder.address(this.address).port(this.port);
            }
            builder.admissionKey(this.admission.key(prefix + ".admission", this.privateData, prefix + ".private-data"));
            return builder.name(name)
                .privateData(this.privateData.getBytes(StandardCharsets.UTF_8)).poolSize(this.poolSize)
                .connectTimeout(this.connectTimeout).requestTimeout(this.requestTimeout).receiveSlots(this.receiveSlots)
                .sendSlots(this.sendSlots).maxMessageSize(this.maxMessageSize).mode(this.mode).rawWindow(this.rawWindow)
                .oneSidedDepth(this.oneSidedDepth).maxRetries(this.maxRetries)
                .backoff(this.backoffInitial, this.backoffMultiplier, this.backoffMax).eventLoops(this.eventLoops)
                .busyPoll(this.busyPoll);
        }

        public @Nullable String getAddress() {
            return this.address;
        }

        public void setAddress(@Nullable String address) {
            this.address = address;
        }

        public @Nullable String getServiceId() {
            return this.serviceId;
        }

        public void setServiceId(@Nullable String serviceId) {
            this.serviceId = serviceId;
        }

        public String getEndpoint() {
            return this.endpoint;
        }

        public void setEndpoint(String endpoint) {
            this.endpoint = endpoint;
        }

        public int getPort() {
            return this.port;
        }

        public void setPort(int port) {
            this.port = port;
        }

        public String getPrivateData() {
            return this.privateData;
        }

        public void setPrivateData(String privateData) {
            this.privateData = privateData;
        }

        public Admission getAdmission() {
            return this.admission;
        }

        public int getPoolSize() {
            return this.poolSize;
        }

        public void setPoolSize(int poolSize) {
            this.poolSize = poolSize;
        }

        public Duration getConnectTimeout() {
            return this.connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public Duration getRequestTimeout() {
            return this.requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            this.requestTimeout = requestTimeout;
        }

        public int getReceiveSlots() {
            return this.receiveSlots;
        }

        public void setReceiveSlots(int receiveSlots) {
            this.receiveSlots = receiveSlots;
        }

        public int getSendSlots() {
            return this.sendSlots;
        }

        public void setSendSlots(int sendSlots) {
            this.sendSlots = sendSlots;
        }

        public int getMaxMessageSize() {
            return this.maxMessageSize;
        }

        public void setMaxMessageSize(int maxMessageSize) {
            this.maxMessageSize = maxMessageSize;
        }

        public RpmaWireMode getMode() {
            return this.mode;
        }

        public void setMode(RpmaWireMode mode) {
            this.mode = mode;
        }

        public int getRawWindow() {
            return this.rawWindow;
        }

        public void setRawWindow(int rawWindow) {
            this.rawWindow = rawWindow;
        }

        public int getOneSidedDepth() {
            return this.oneSidedDepth;
        }

        public void setOneSidedDepth(int oneSidedDepth) {
            this.oneSidedDepth = oneSidedDepth;
        }

        public int getMaxRetries() {
            return this.maxRetries;
        }

        public void setMaxRetries(int maxRetries) {
            this.maxRetries = maxRetries;
        }

        public Duration getBackoffInitial() {
            return this.backoffInitial;
        }

        public void setBackoffInitial(Duration backoffInitial) {
            this.backoffInitial = backoffInitial;
        }

        public double getBackoffMultiplier() {
            return this.backoffMultiplier;
        }

        public void setBackoffMultiplier(double backoffMultiplier) {
            this.backoffMultiplier = backoffMultiplier;
        }

        public Duration getBackoffMax() {
            return this.backoffMax;
        }

        public void setBackoffMax(Duration backoffMax) {
            this.backoffMax = backoffMax;
        }

        public int getEventLoops() {
            return this.eventLoops;
        }

        public void setEventLoops(int eventLoops) {
            this.eventLoops = eventLoops;
        }

        public Duration getBusyPoll() {
            return this.busyPoll;
        }

        public void setBusyPoll(Duration busyPoll) {
            this.busyPoll = busyPoll;
        }
    }

    /**
     * The admission token a client presents: a key id and a secret that the server has among its
     * {@code rpma.server.admission.keys}. Each connection attempt presents a token of its own, issued then,
     * since a server admits a token once. Its {@code toString()} hides the secret.
     */
    public static class Admission {

        /**
         * Id of the admission token's key, as the server's rpma.server.admission.keys name it (0 to 255); set
         * together with secret, or neither for a server without token admission.
         */
        private @Nullable Integer keyId;

        /**
         * Secret of the key, as the server has it: at least 32 bytes of UTF-8. Each connection attempt sends a
         * token made with it, issued then.
         */
        private @Nullable String secret;

        public @Nullable Integer getKeyId() {
            return this.keyId;
        }

        public void setKeyId(@Nullable Integer keyId) {
            this.keyId = keyId;
        }

        public @Nullable String getSecret() {
            return this.secret;
        }

        public void setSecret(@Nullable String secret) {
            this.secret = secret;
        }

        /**
         * The key, validated; {@code null} when neither the id nor the secret is set.
         *
         * @throws InvalidRpmaPropertyException when only one is set, the id is out of range, the secret too short,
         *     or the private data too long to fit behind the token; never showing the secret
         */
        @Nullable RpmaAdmissionKey key(String property, String privateData, String privateDataProperty) {
            Integer keyId = this.keyId;
            String secret = this.secret;
            boolean hasSecret = secret != null && !secret.isEmpty();
            if (keyId == null && !hasSecret) {
                return null;
            }
            if (keyId == null) {
                throw new InvalidRpmaPropertyException(property + ".key-id", null, "is not set, while " + property
                        + ".secret is: a token names the key it was made with", "Set '" + property + ".key-id' to the id"
                                + " the server gives this secret under rpma.server.admission.keys, or remove '" + property
                                + ".secret' for a server without token admission");
            }
            if (keyId < 0 || keyId > RpmaAdmissionKey.MAX_ID) {
                throw new InvalidRpmaPropertyException(property + ".key-id", keyId, "must be 0 to "
                        + RpmaAdmissionKey.MAX_ID + ", as the server's key ids");
            }
            if (!hasSecret) {
                throw new InvalidRpmaPropertyException(property + ".secret", null, "is not set, while " + property
                        + ".key-id is", "Set '" + property + ".secret' to the secret of key " + keyId + " on the"
                                + " server, or remove '" + property + ".key-id' for a server without token admission");
            }
            int length = secret.getBytes(StandardCharsets.UTF_8).length;
            if (length < RpmaAdmissionKey.MIN_SECRET_LENGTH) {
                // the value is left out on purpose: a secret never goes into a message
                throw new InvalidRpmaPropertyException(property + ".secret", null, "must be at least "
                        + RpmaAdmissionKey.MIN_SECRET_LENGTH + " bytes (UTF-8), not " + length, "Give key " + keyId
                                + " the server's secret, which is at least as long, in '" + property + ".secret'");
            }
            int dataLength = privateData.getBytes(StandardCharsets.UTF_8).length;
            if (dataLength > RpmaAdmissionToken.MAX_APPLICATION_DATA) {
                throw new InvalidRpmaPropertyException(privateDataProperty, privateData, "is " + dataLength
                        + " bytes (UTF-8); behind an admission token at most " + RpmaAdmissionToken.MAX_APPLICATION_DATA
                        + " fit, since the token takes " + RpmaAdmissionToken.LENGTH + " of the "
                        + RpmaAdmissionToken.MAX_PRIVATE_DATA + " bytes a connection request carries", "Shorten it");
            }
            return RpmaAdmissionKey.of(keyId, secret);
        }

        @Override
        public String toString() {
            return "Admission[keyId=" + this.keyId + ", secret=" + ((this.secret != null) ? "******" : null) + "]";
        }
    }
}
