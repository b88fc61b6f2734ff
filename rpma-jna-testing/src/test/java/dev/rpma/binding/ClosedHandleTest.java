package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every method of every native object, called after the object was closed (or a request consumed),
 * fails with {@link IllegalStateException} without a single native call; and a second close is a
 * no-op.
 */
class ClosedHandleTest {

    /** One method called on a closed object of type {@code T}. */
    private record Case<T>(String name, Function<FakeRig, T> open, Consumer<T> close, Consumer<T> call) {
    }

    private static final List<Case<?>> CASES = new ArrayList<>();

    private static <T> void when(String type, Function<FakeRig, T> open, Consumer<T> close, String method,
            Consumer<T> call) {
        CASES.add(new Case<>(type + "." + method, open, close, call));
    }

    static {
        Function<FakeRig, RpmaPeer> peer = rig -> rig.rpma.openPeer("198.18.0.9", PeerRole.SERVER);
        when("RpmaPeer", peer, RpmaPeer::close, "isOdpCapable", RpmaPeer::isOdpCapable);
        when("RpmaPeer", peer, RpmaPeer::close, "listen", p -> p.listen("198.18.0.9", 7204));
        when("RpmaPeer", peer, RpmaPeer::close, "newConnectionRequest", p -> p.newConnectionRequest("198.18.0.2", 1, null));
        when("RpmaPeer", peer, RpmaPeer::close, "register(ByteBuffer)",
                p -> p.register(ByteBuffer.allocateDirect(8), MemoryUsage.SEND));
        when("RpmaPeer", peer, RpmaPeer::close, "register(long)", p -> p.register(0x1000, 8, MemoryUsage.SEND));
        when("RpmaPeer", peer, RpmaPeer::close, "newSharedReceiveQueue", p -> p.newSharedReceiveQueue(null));

        Function<FakeRig, RpmaEndpoint> endpoint = rig -> rig.peer.listen("198.18.0.1", 7300);
        when("RpmaEndpoint", endpoint, RpmaEndpoint::close, "fd", RpmaEndpoint::fd);
        when("RpmaEndpoint", endpoint, RpmaEndpoint::close, "configureBlocking", e -> e.configureBlocking(false));
        when("RpmaEndpoint", endpoint, RpmaEndpoint::close, "nextConnectionRequest()", RpmaEndpoint::nextConnectionRequest);
        when("RpmaEndpoint", endpoint, RpmaEndpoint::close, "nextConnectionRequest(config)",
                e -> e.nextConnectionRequest(null));

        Function<FakeRig, RpmaConnectionRequest> request = rig -> rig.request(new byte[] { 1 });
        when("RpmaConnectionRequest", request, RpmaConnectionRequest::reject, "connect", RpmaConnectionRequest::connect);
        when("RpmaConnectionRequest", request, RpmaConnectionRequest::reject, "connect(data)", r -> r.connect(new byte[3]));
        when("RpmaConnectionRequest", request, RpmaConnectionRequest::reject, "reject", RpmaConnectionRequest::reject);
        when("RpmaConnectionRequest", request, RpmaConnectionRequest::reject, "receive",
                r -> r.receive(null, 0, 8, 0));

        Function<FakeRig, RpmaConnection> connection = FakeRig::connection;
        Consumer<RpmaConnection> closeConnection = RpmaConnection::close;
        when("RpmaConnection", connection, closeConnection, "nextEvent", RpmaConnection::nextEvent);
        when("RpmaConnection", connection, closeConnection, "eventFd", RpmaConnection::eventFd);
        when("RpmaConnection", connection, closeConnection, "configureEventsBlocking", c -> c.configureEventsBlocking(false));
        when("RpmaConnection", connection, closeConnection, "privateData", RpmaConnection::privateData);
        when("RpmaConnection", connection, closeConnection, "qpNumber", RpmaConnection::qpNumber);
        when("RpmaConnection", connection, closeConnection, "completionFd", RpmaConnection::completionFd);
        when("RpmaConnection", connection, closeConnection, "awaitCompletion", RpmaConnection::awaitCompletion);
        when("RpmaConnection", connection, closeConnection, "applyRemotePeerConfig", c -> c.applyRemotePeerConfig(null));
        when("RpmaConnection", connection, closeConnection, "read",
                c -> c.read(null, 0, null, 0, 8, CompletionMode.ALWAYS, 0));
        when("RpmaConnection", connection, closeConnection, "write",
                c -> c.write(null, 0, null, 0, 8, CompletionMode.ALWAYS, 0));
        when("RpmaConnection", connection, closeConnection, "writeWithImmediate",
                c -> c.writeWithImmediate(null, 0, null, 0, 8, CompletionMode.ALWAYS, 1, 0));
        when("RpmaConnection", connection, closeConnection, "atomicWrite",
                c -> c.atomicWrite(null, 0, 1, CompletionMode.ALWAYS, 0));
        when("RpmaConnection", connection, closeConnection, "flush",
                c -> c.flush(null, 0, 8, FlushType.PERSISTENT, CompletionMode.ALWAYS, 0));
        when("RpmaConnection", connection, closeConnection, "send", c -> c.send(null, 0, 8, CompletionMode.ALWAYS, 0));
        when("RpmaConnection", connection, closeConnection, "sendWithImmediate",
                c -> c.sendWithImmediate(null, 0, 8, CompletionMode.ALWAYS, 1, 0));
        when("RpmaConnection", connection, closeConnection, "receive", c -> c.receive(null, 0, 8, 0));
        when("RpmaConnection", connection, closeConnection, "disconnect", RpmaConnection::disconnect);
        when("RpmaConnection", connection, closeConnection, "completionQueue().fd", c -> c.completionQueue().fd());
        when("RpmaConnection", connection, closeConnection, "completionQueue().await", c -> c.completionQueue().await());
        when("RpmaConnection", connection, closeConnection, "completionQueue().poll",
                c -> c.completionQueue().poll(new RpmaCompletions(1)));

        Function<FakeRig, RpmaConnectionConfig> connectionConfig = rig -> rig.rpma.newConnectionConfig();
        Consumer<RpmaConnectionConfig> closeConnectionConfig = RpmaConnectionConfig::close;
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "timeout()", RpmaConnectionConfig::timeout);
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "timeout(d)",
                c -> c.timeout(Duration.ofSeconds(1)));
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "cqSize()", RpmaConnectionConfig::cqSize);
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "cqSize(n)", c -> c.cqSize(1));
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "rcqSize()", RpmaConnectionConfig::rcqSize);
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "rcqSize(n)", c -> c.rcqSize(1));
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "sqSize()", RpmaConnectionConfig::sqSize);
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "sqSize(n)", c -> c.sqSize(1));
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "rqSize()", RpmaConnectionConfig::rqSize);
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "rqSize(n)", c -> c.rqSize(1));
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "sharedCompletionChannel()",
                RpmaConnectionConfig::sharedCompletionChannel);
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "sharedCompletionChannel(b)",
                c -> c.sharedCompletionChannel(true));
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "hasSharedReceiveQueue",
                RpmaConnectionConfig::hasSharedReceiveQueue);
        when("RpmaConnectionConfig", connectionConfig, closeConnectionConfig, "sharedReceiveQueue",
                c -> c.sharedReceiveQueue(null));

        Function<FakeRig, RpmaPeerConfig> peerConfig = rig -> rig.rpma.newPeerConfig();
        when("RpmaPeerConfig", peerConfig, RpmaPeerConfig::close, "directWriteToPmem()", RpmaPeerConfig::directWriteToPmem);
        when("RpmaPeerConfig", peerConfig, RpmaPeerConfig::close, "directWriteToPmem(b)", c -> c.directWriteToPmem(true));
        when("RpmaPeerConfig", peerConfig, RpmaPeerConfig::close, "descriptor", RpmaPeerConfig::descriptor);

        Function<FakeRig, RpmaSrqConfig> srqConfig = rig -> rig.rpma.newSrqConfig();
        when("RpmaSrqConfig", srqConfig, RpmaSrqConfig::close, "rqSize()", RpmaSrqConfig::rqSize);
        when("RpmaSrqConfig", srqConfig, RpmaSrqConfig::close, "rqSize(n)", c -> c.rqSize(1));
        when("RpmaSrqConfig", srqConfig, RpmaSrqConfig::close, "rcqSize()", RpmaSrqConfig::rcqSize);
        when("RpmaSrqConfig", srqConfig, RpmaSrqConfig::close, "rcqSize(n)", c -> c.rcqSize(1));

        Function<FakeRig, RpmaMemoryRegion> region = rig -> rig.peer.register(ByteBuffer.allocateDirect(8),
                MemoryUsage.SEND);
        when("RpmaMemoryRegion", region, RpmaMemoryRegion::close, "descriptor", RpmaMemoryRegion::descriptor);
        when("RpmaMemoryRegion", region, RpmaMemoryRegion::close, "advise", r -> r.advise(0, 8, 0, 0));

        Function<FakeRig, RpmaRemoteMemoryRegion> remote = FakeRig::remoteRegion;
        when("RpmaRemoteMemoryRegion", remote, RpmaRemoteMemoryRegion::close, "size", RpmaRemoteMemoryRegion::size);
        when("RpmaRemoteMemoryRegion", remote, RpmaRemoteMemoryRegion::close, "flushTypes",
                RpmaRemoteMemoryRegion::flushTypes);

        Function<FakeRig, RpmaSharedReceiveQueue> srq = rig -> rig.peer.newSharedReceiveQueue(null);
        when("RpmaSharedReceiveQueue", srq, RpmaSharedReceiveQueue::close, "receive", q -> q.receive(null, 0, 8, 0));
        when("RpmaSharedReceiveQueue", srq, RpmaSharedReceiveQueue::close, "receiveCompletionQueue().poll",
                q -> q.receiveCompletionQueue().poll(new RpmaCompletions(1)));
        when("RpmaSharedReceiveQueue", srq, RpmaSharedReceiveQueue::close, "receiveCompletionQueue().fd",
                q -> q.receiveCompletionQueue().fd());
    }

    @TestFactory
    Stream<DynamicTest> everyMethodAfterCloseFailsWithoutANativeCall() {
        return CASES.stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> run(c)));
    }

    private static <T> void run(Case<T> c) {
        try (FakeRig rig = new FakeRig()) {
            T object = c.open().apply(rig);
            c.close().accept(object);
            int before = rig.fake.totalCalls();

            assertThatThrownBy(() -> c.call().accept(object)).isInstanceOf(IllegalStateException.class)
                    .hasMessageFindingMatch("is closed; create a new one|already connected or rejected");
            assertThat(rig.fake.totalCalls()).as("native calls after close").isEqualTo(before);

            if (object instanceof AutoCloseable closeable) {
                closeable.close(); // a second close is a no-op
                assertThat(rig.fake.totalCalls()).as("native calls of a second close").isEqualTo(before);
            }
        }
        catch (Exception ex) {
            throw new AssertionError(ex);
        }
    }

    @TestFactory
    Stream<DynamicTest> aClosedArgumentFailsWithoutANativeCall() {
        return Stream.of(
                DynamicTest.dynamicTest("send with a closed region", () -> withRig(rig -> {
                    RpmaConnection connection = rig.connection();
                    RpmaMemoryRegion region = rig.region(8, MemoryUsage.SEND);
                    region.close();
                    return () -> connection.send(region, 0, 8, CompletionMode.ALWAYS, 0);
                })),
                DynamicTest.dynamicTest("write to a closed remote region", () -> withRig(rig -> {
                    RpmaConnection connection = rig.connection();
                    RpmaMemoryRegion region = rig.region(8, MemoryUsage.WRITE_SRC);
                    RpmaRemoteMemoryRegion remote = rig.remoteRegion();
                    remote.close();
                    return () -> connection.write(remote, 0, region, 0, 8, CompletionMode.ALWAYS, 0);
                })),
                DynamicTest.dynamicTest("next request with a closed configuration", () -> withRig(rig -> {
                    RpmaConnectionConfig config = rig.rpma.newConnectionConfig();
                    config.close();
                    rig.script.queueRequest(new byte[] { 1 });
                    return () -> rig.endpoint.nextConnectionRequest(config);
                })),
                DynamicTest.dynamicTest("client request with a closed configuration", () -> withRig(rig -> {
                    RpmaConnectionConfig config = rig.rpma.newConnectionConfig();
                    config.close();
                    return () -> rig.peer.newConnectionRequest("198.18.0.2", 7204, config);
                })),
                DynamicTest.dynamicTest("set a closed shared receive queue", () -> withRig(rig -> {
                    RpmaConnectionConfig config = rig.track(rig.rpma.newConnectionConfig());
                    RpmaSharedReceiveQueue srq = rig.peer.newSharedReceiveQueue(null);
                    srq.close();
                    return () -> config.sharedReceiveQueue(srq);
                })),
                DynamicTest.dynamicTest("apply a closed peer configuration", () -> withRig(rig -> {
                    RpmaConnection connection = rig.connection();
                    RpmaPeerConfig config = rig.rpma.newPeerConfig();
                    config.close();
                    return () -> connection.applyRemotePeerConfig(config);
                })));
    }

    private static void withRig(Function<FakeRig, Runnable> arrange) {
        FakeRig rig = new FakeRig();
        Runnable call = arrange.apply(rig);
        int before = rig.fake.totalCalls();
        int children = rig.peer.openChildren();
        assertThatThrownBy(call::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
        assertThat(rig.fake.totalCalls()).isEqualTo(before);
        assertThat(rig.peer.openChildren()).isEqualTo(children);
        while (rig.script.pending() > 0) {
            rig.track(rig.endpoint.nextConnectionRequest());
        }
        // the refused call left nothing acquired, so closing completes (close waits for calls in flight)
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(5), rig::closeTracked,
                "closing after a refused call hung: a handle was left acquired");
        rig.close();
    }
}
