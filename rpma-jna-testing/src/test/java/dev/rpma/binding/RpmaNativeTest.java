package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.read.ListAppender;

import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.testing.RpmaTexts;

/**
 * The typed API against the real librpma.so.0, on a machine without an RDMA device: texts,
 * configurations, descriptors, the no-device failure and its errno, and librpma's log lines in SLF4J.
 */
class RpmaNativeTest {

    /** An address no RDMA device serves here (loopback: resolving it sends nothing on a network). */
    private static final String NO_DEVICE = "127.0.0.1";

    private final Rpma rpma = Rpma.get();

    private final Logger librpmaLogger = (Logger) LoggerFactory.getLogger(RpmaLog.LOGGER_NAME);

    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();

    private RpmaLog.Level primary;

    private RpmaLog.Level aux;

    private Level loggerLevel;

    @BeforeEach
    void saveLogState() {
        this.primary = this.rpma.log().threshold(RpmaLog.Threshold.PRIMARY);
        this.aux = this.rpma.log().threshold(RpmaLog.Threshold.AUX);
        this.loggerLevel = this.librpmaLogger.getLevel();
        this.lines.start();
        this.librpmaLogger.addAppender(this.lines);
    }

    @AfterEach
    void restoreLogState() {
        this.librpmaLogger.detachAppender(this.lines);
        this.librpmaLogger.setLevel(this.loggerLevel);
        this.rpma.log().routeToDefault();
        this.rpma.log().setThreshold(RpmaLog.Threshold.PRIMARY, this.primary);
        this.rpma.log().setThreshold(RpmaLog.Threshold.AUX, this.aux);
    }

    @Test
    void librpmaIsAvailableHere() {
        assertThat(Rpma.isAvailable()).isTrue();
        assertThat(Rpma.unavailabilityCause()).isNull();
        Rpma.ensureAvailable();
        assertThat(Rpma.get()).isSameAs(this.rpma);
    }

    @Test
    void errorTexts() {
        assertThat(this.rpma.errorText(RpmaError.UNKNOWN)).isEqualTo("Unknown error");
        assertThat(this.rpma.errorText(RpmaError.NOSUPP)).isEqualTo("Not supported");
        assertThat(this.rpma.errorText(RpmaError.PROVIDER)).isEqualTo("Provider error occurred");
        assertThat(this.rpma.errorText(RpmaError.NOMEM)).isEqualTo("Out of memory");
        assertThat(this.rpma.errorText(RpmaError.INVAL)).isEqualTo("Invalid argument");
        assertThat(this.rpma.errorText(RpmaError.NO_COMPLETION)).isEqualTo("No next completion available");
        assertThat(this.rpma.errorText(RpmaError.NO_EVENT)).isEqualTo("No next event available");
        assertThat(this.rpma.errorText(RpmaError.AGAIN)).isEqualTo("Temporary error, try again");
        assertThat(this.rpma.errorText(RpmaError.SHARED_CHANNEL)).isEqualTo("Completion channel is shared");
        assertThat(this.rpma.errorText(RpmaError.NOT_SHARED_CHNL)).isEqualTo("Completion channel is not shared");
        assertThat(this.rpma.lib().rpma_err_2str(0)).isEqualTo("Success");
        assertThat(this.rpma.lib().rpma_err_2str(-100010)).isEqualTo("Unknown error");
        assertThat(this.rpma.lib().rpma_err_2str(-1)).isEqualTo("Unknown error");
    }

    @Test
    void eventTexts() {
        assertThat(this.rpma.eventText(RpmaConnectionEvent.UNDEFINED)).isEqualTo("Undefined connection event");
        assertThat(this.rpma.eventText(RpmaConnectionEvent.ESTABLISHED)).isEqualTo("Connection established");
        assertThat(this.rpma.eventText(RpmaConnectionEvent.CLOSED)).isEqualTo("Connection closed");
        assertThat(this.rpma.eventText(RpmaConnectionEvent.LOST)).isEqualTo("Connection lost");
        assertThat(this.rpma.eventText(RpmaConnectionEvent.REJECTED)).isEqualTo("Connection rejected");
        assertThat(this.rpma.eventText(RpmaConnectionEvent.UNREACHABLE)).isEqualTo("Connection unreachable");
        assertThat(this.rpma.lib().rpma_utils_conn_event_2str(5)).isEqualTo("Unsupported connection event");
        assertThat(this.rpma.lib().rpma_utils_conn_event_2str(-2)).isEqualTo("Unsupported connection event");
    }

    @Test
    void theFakesTextsAreTheRealOnes() {
        for (int code = -100012; code <= -99998; code++) {
            assertThat(RpmaTexts.errorText(code)).as("code %d", code).isEqualTo(this.rpma.lib().rpma_err_2str(code));
        }
        assertThat(RpmaTexts.errorText(0)).isEqualTo(this.rpma.lib().rpma_err_2str(0));
        for (int event = -3; event <= 7; event++) {
            assertThat(RpmaTexts.eventText(event)).as("event %d", event)
                    .isEqualTo(this.rpma.lib().rpma_utils_conn_event_2str(event));
        }
    }

    @Test
    void connectionConfigDefaults() {
        try (RpmaConnectionConfig config = this.rpma.newConnectionConfig()) {
            assertThat(config.timeout()).isEqualTo(Duration.ofMillis(1000));
            assertThat(config.cqSize()).isEqualTo(10);
            assertThat(config.rcqSize()).isZero();
            assertThat(config.sqSize()).isEqualTo(10);
            assertThat(config.rqSize()).isEqualTo(10);
            assertThat(config.sharedCompletionChannel()).isFalse();
            assertThat(config.hasSharedReceiveQueue()).isFalse();
        }
    }

    @Test
    void connectionConfigRoundTrip() {
        try (RpmaConnectionConfig config = this.rpma.newConnectionConfig()) {
            config.timeout(Duration.ofMillis(2345)).cqSize(11).rcqSize(12).sqSize(13).rqSize(14);
            assertThat(config.timeout()).isEqualTo(Duration.ofMillis(2345));
            assertThat(config.cqSize()).isEqualTo(11);
            assertThat(config.rcqSize()).isEqualTo(12);
            assertThat(config.sqSize()).isEqualTo(13);
            assertThat(config.rqSize()).isEqualTo(14);
            config.timeout(Duration.ZERO).cqSize(0).rcqSize(Integer.MAX_VALUE);
            assertThat(config.timeout()).isZero();
            assertThat(config.cqSize()).isZero();
            assertThat(config.rcqSize()).isEqualTo(Integer.MAX_VALUE);

            config.sharedCompletionChannel(true);
            assertThat(config.sharedCompletionChannel()).isTrue();
            config.sharedCompletionChannel(false);
            assertThat(config.sharedCompletionChannel()).isFalse();
            config.sharedCompletionChannel(true);
            assertThat(config.sharedCompletionChannel()).isTrue();
        }
    }

    @Test
    void connectionConfigRejectsOutOfRangeValuesBeforeLibrpma() {
        try (RpmaConnectionConfig config = this.rpma.newConnectionConfig()) {
            assertThatThrownBy(() -> config.cqSize(-1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> config.timeout(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> config.timeout(Duration.ofDays(30))).isInstanceOf(IllegalArgumentException.class);
            assertThat(config.cqSize()).isEqualTo(10);
        }
    }

    @Test
    void srqConfigDefaultsAndRoundTrip() {
        try (RpmaSrqConfig config = this.rpma.newSrqConfig()) {
            assertThat(config.rqSize()).isEqualTo(20);
            assertThat(config.rcqSize()).isEqualTo(20);
            config.rqSize(100).rcqSize(0);
            assertThat(config.rqSize()).isEqualTo(100);
            assertThat(config.rcqSize()).isZero();
        }
    }

    @Test
    void peerConfigRoundTripAndDescriptor() {
        try (RpmaPeerConfig config = this.rpma.newPeerConfig()) {
            assertThat(config.directWriteToPmem()).isFalse();
            assertThat(config.descriptor()).containsExactly(0);
            config.directWriteToPmem(true);
            assertThat(config.directWriteToPmem()).isTrue();
            byte[] descriptor = config.descriptor();
            assertThat(descriptor).containsExactly(1);
            try (RpmaPeerConfig received = this.rpma.peerConfigFromDescriptor(descriptor)) {
                assertThat(received.directWriteToPmem()).isTrue();
            }
            config.directWriteToPmem(false);
            assertThat(config.directWriteToPmem()).isFalse();
            try (RpmaPeerConfig received = this.rpma.peerConfigFromDescriptor(config.descriptor())) {
                assertThat(received.directWriteToPmem()).isFalse();
            }
        }
        assertThatThrownBy(() -> this.rpma.peerConfigFromDescriptor(new byte[0]))
                .isInstanceOfSatisfying(RpmaException.class, ex -> assertThat(ex.error()).isEqualTo(RpmaError.INVAL));
    }

    private static byte[] descriptor(long address, long length, int rkey, int usage, int size) {
        ByteBuffer buffer = ByteBuffer.allocate(Math.max(size, 21)).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(address).putLong(length).putInt(rkey).put((byte) usage);
        byte[] bytes = new byte[size];
        System.arraycopy(buffer.array(), 0, bytes, 0, size);
        return bytes;
    }

    @Test
    void remoteMemoryRegionFromA21ByteDescriptor() {
        int usage = MemoryUsage.WRITE_DST.flag() | MemoryUsage.FLUSH_TYPE_PERSISTENT.flag();
        try (RpmaRemoteMemoryRegion remote = this.rpma.remoteMemoryRegion(
                descriptor(0x7f00_1234_5000L, 1 << 20, 0xabcdef, usage, 21))) {
            assertThat(remote.size()).isEqualTo(1 << 20);
            assertThat(remote.flushTypes()).isEqualTo(MemoryUsage.FLUSH_TYPE_PERSISTENT.flag());
            remote.close();
            assertThat(remote.isClosed()).isTrue();
        }
    }

    @Test
    void remoteMemoryRegionFromA20ByteDescriptorIsRejected() {
        assertThatThrownBy(() -> this.rpma.remoteMemoryRegion(descriptor(1, 2, 3, 4, 20)))
                .isInstanceOfSatisfying(RpmaException.class, ex -> {
                    assertThat(ex.error()).isEqualTo(RpmaError.INVAL);
                    assertThat(ex.function()).isEqualTo("rpma_mr_remote_from_descriptor");
                    assertThat(ex.getMessage()).contains("A memory region descriptor is 21 bytes").contains("got 20");
                });
        assertThatThrownBy(() -> this.rpma.remoteMemoryRegion(descriptor(1, 2, 3, 0, 21))).as("usage 0")
                .isInstanceOfSatisfying(RpmaException.class, ex -> assertThat(ex.error()).isEqualTo(RpmaError.INVAL));
    }

    @Test
    void noDeviceFailsWithEnodevUnderTheDefaultLogger() {
        this.rpma.log().routeToDefault();
        assertNoDevice(PeerRole.SERVER);
        assertNoDevice(PeerRole.CLIENT);
        assertThat(this.lines.list).as("librpma's own logger, not SLF4J").isEmpty();
    }

    @Test
    void noDeviceFailsWithEnodevWhileLinesGoToSlf4j() {
        this.rpma.log().routeToSlf4j();
        assertNoDevice(PeerRole.SERVER);
        assertThat(this.lines.list).as("the failure was logged through the Java callback").isNotEmpty();
    }

    /**
     * The Java log callback runs inside librpma between the failing provider call and librpma's
     * return; whatever it does to errno (logging writes, JNA calls), errno must come back as the
     * provider left it.
     */
    @Test
    void errnoSurvivesALogCallbackThatClobbersIt() {
        List<Integer> errnoInsideCallback = new ArrayList<>();
        AppenderBase<ILoggingEvent> clobbering = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                LibC.close(-1); // sets errno to EBADF
                errnoInsideCallback.add(LibC.errno());
            }
        };
        clobbering.start();
        this.librpmaLogger.addAppender(clobbering);
        try {
            this.rpma.log().routeToSlf4j();
            assertNoDevice(PeerRole.SERVER);
            assertThat(errnoInsideCallback).as("the appender did clobber errno").isNotEmpty()
                    .allMatch(errno -> errno == Errno.EBADF);
        }
        finally {
            this.librpmaLogger.detachAppender(clobbering);
        }
    }

    @Test
    void forgettingRemovedDevicesWithoutAnyIsHarmlessAndLeavesLookupsAsTheyWere() {
        // librdmacm reads an empty list here: nothing to close, and no error to raise
        this.rpma.forgetRemovedDevices();
        this.rpma.forgetRemovedDevices();
        assertNoDevice(PeerRole.SERVER);
    }

    private void assertNoDevice(PeerRole role) {
        assertThatThrownBy(() -> this.rpma.openPeer(NO_DEVICE, role)).isInstanceOfSatisfying(RpmaException.class, ex -> {
            assertThat(ex.error()).isEqualTo(RpmaError.PROVIDER);
            assertThat(ex.function()).isEqualTo("rpma_utils_get_ibv_context");
            assertThat(ex.errno()).as("errno").isEqualTo(Errno.ENODEV);
            assertThat(ex.getMessage()).startsWith("rpma_utils_get_ibv_context() failed with RPMA_E_PROVIDER (-100002):"
                    + " Provider error occurred; errno 19 (ENODEV). No RDMA device serves 127.0.0.1")
                    .contains("soft-RoCE");
        });
    }

    @Test
    void librpmaLogLinesArriveInSlf4jWithFileAndFunction() {
        this.librpmaLogger.setLevel(Level.DEBUG);
        this.rpma.log().routeToSlf4j();
        assertThat(this.rpma.log().threshold(RpmaLog.Threshold.PRIMARY)).as("opened to the logger's level")
                .isEqualTo(RpmaLog.Level.DEBUG);

        assertThatThrownBy(() -> this.rpma.openPeer(NO_DEVICE, PeerRole.SERVER)).isInstanceOf(RpmaException.class);

        assertThat(this.lines.list).filteredOn(e -> e.getFormattedMessage().contains("rdma_getaddrinfo"))
                .singleElement().satisfies(line -> {
                    assertThat(line.getLevel()).isEqualTo(Level.ERROR);
                    assertThat(line.getLoggerName()).isEqualTo("dev.rpma.librpma");
                    assertThat(line.getFormattedMessage()).matches("\\S*info\\.c:\\d+ rpma_info_new\\(\\): "
                            + "rdma_getaddrinfo\\(node=127\\.0\\.0\\.1, service=\\(null\\), ai_flags=passive,"
                            + " ai_qp_type=IBV_QPT_RC, ai_port_space=RDMA_PS_TCP\\): No such device");
                });
    }

    @Test
    void levelsAndIntegerConversionsOfOtherLines() {
        this.librpmaLogger.setLevel(Level.DEBUG);
        this.rpma.log().routeToSlf4j();
        this.rpma.remoteMemoryRegion(descriptor(0x1122334455667788L, 4096, 0xabcdef, 0x21, 21)).close();
        assertThatThrownBy(() -> this.rpma.remoteMemoryRegion(descriptor(1, 2, 3, 4, 20)))
                .isInstanceOf(RpmaException.class);
        this.rpma.peerConfigFromDescriptor(new byte[] { 1 }).close();

        assertThat(this.lines.list).extracting(ILoggingEvent::getLevel, e -> e.getFormattedMessage()
                .replaceFirst("^\\S*/", "").replaceFirst(":\\d+ ", ":N ")).containsExactly(
                        org.assertj.core.groups.Tuple.tuple(Level.DEBUG, "mr.c:N rpma_mr_remote_from_descriptor(): "
                                + "new struct rpma_mr_remote {raddr=0x1122334455667788, size=4096, rkey=0xabcdef,"
                                + " usage=0x21}"),
                        org.assertj.core.groups.Tuple.tuple(Level.ERROR, "mr.c:N rpma_mr_remote_from_descriptor(): "
                                + "incorrect size of the descriptor: 20 bytes (should be at least: 21 bytes)"),
                        org.assertj.core.groups.Tuple.tuple(Level.INFO, "peer_cfg.c:N rpma_peer_cfg_from_descriptor(): "
                                + "INFO: Direct Write To PMem is supported"));
    }

    @Test
    void routingFollowsTheLoggersLevel() {
        this.librpmaLogger.setLevel(Level.WARN);
        this.rpma.log().routeToSlf4j();
        assertThat(this.rpma.log().threshold(RpmaLog.Threshold.PRIMARY)).isEqualTo(RpmaLog.Level.WARNING);
        this.rpma.remoteMemoryRegion(descriptor(1, 2, 3, 4, 21)).close(); // a DEBUG line, filtered by librpma
        assertThat(this.lines.list).isEmpty();

        this.librpmaLogger.setLevel(Level.OFF);
        this.rpma.log().routeToSlf4j();
        assertThat(this.rpma.log().threshold(RpmaLog.Threshold.PRIMARY)).isEqualTo(RpmaLog.Level.DISABLED);
    }

    @Test
    void backToTheDefaultLoggerNoLineReachesSlf4jAndNothingCrashes() {
        this.rpma.log().routeToSlf4j();
        this.rpma.log().routeToDefault();
        // before RPMA_LOG_USE_DEFAULT_FUNCTION was NULL here, the next line made librpma jump to address 1
        assertNoDevice(PeerRole.SERVER);
        assertThat(this.lines.list).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = { "PRIMARY", "AUX" })
    void thresholdsRoundTrip(String name) {
        RpmaLog.Threshold threshold = RpmaLog.Threshold.valueOf(name);
        for (RpmaLog.Level level : RpmaLog.Level.values()) {
            this.rpma.log().setThreshold(threshold, level);
            assertThat(this.rpma.log().threshold(threshold)).isEqualTo(level);
        }
    }
}
