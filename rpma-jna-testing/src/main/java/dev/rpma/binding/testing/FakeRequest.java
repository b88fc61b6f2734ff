package dev.rpma.binding.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.sun.jna.Memory;

import dev.rpma.binding.RpmaConnectionEvent;

/**
 * The script of one connection request of a {@link FakeLibRpma}: a server's (queued on a
 * {@link FakeEndpoint}) or a client's ({@code rpma_conn_req_new}). Says how {@code rpma_conn_req_connect}
 * ends and records what happened. Thread-safe.
 */
public final class FakeRequest extends FakeObject {

    /** Where the request is in its life. */
    public enum State {
        /** Scripted on an endpoint, not yet returned by {@code rpma_ep_next_conn_req}. */
        QUEUED,
        /** Handed out, waiting for connect or delete. */
        PENDING,
        /** {@code rpma_conn_req_connect} succeeded: see {@link #connection()}. */
        CONNECTED,
        /** {@code rpma_conn_req_connect} failed (and consumed the request, as librpma does). */
        CONNECT_FAILED,
        /** {@code rpma_conn_req_delete}: rejected (server) or abandoned (client). */
        DELETED
    }

    private final FakeEndpoint endpoint;

    private final byte[] privateData;

    private final String address;

    private final String port;

    /** A client's request: the address that names its peer's device; {@code null} on the server side. */
    String peerDevice;

    final List<PostedOperation> receives = new ArrayList<>();

    /** Where the receives posted before connect write: they move to the connection's receive queue. */
    final List<FakeConnection.PostedReceive> dataReceives = new ArrayList<>();

    final List<Integer> eventsAfterConnect = new ArrayList<>();

    State state = State.QUEUED;

    Thread creator;

    Memory privateDataMemory;

    FakeLibRpma.ConnCfg config;

    FakeLibRpma.Failure connectFailure;

    byte[] connectPrivateData;

    FakeConnection connection;

    /** In a loopback: the client's connection that dialled this server-side request, or {@code null}. */
    FakeConnection dialer;

    String consumedOn;

    /** The request's kernel CM id (server side), as {@link FakeLibRpma#cmIdOf} hands it out; 0 on the client side. */
    long cmId;

    CmId cmIdState = CmId.NONE;

    /** Where a server-side request's kernel CM id is: librpma 1.2/1.3 leave it behind on reject and failed accept. */
    public enum CmId {
        /** A client's request: librpma destroys its id itself. */
        NONE,
        /** With the request. */
        WITH_REQUEST,
        /** Taken over by the connection, which destroys it. */
        WITH_CONNECTION,
        /** Left alive by {@code rpma_conn_req_delete} or a failed {@code rpma_conn_req_connect}, as librpma does. */
        LEFT_BEHIND,
        /** Destroyed by the binding after librpma left it behind. */
        DESTROYED,
        /** Released by the kernel when the endpoint's event channel closed, still left behind until then. */
        RELEASED_WITH_ENDPOINT
    }

    FakeRequest(FakeLibRpma fake, FakeEndpoint endpoint, byte[] privateData, String address, String port) {
        super(fake);
        this.endpoint = endpoint;
        this.privateData = privateData;
        this.address = address;
        this.port = port;
    }

    /** The endpoint it came from; {@code null} for a client's request. */
    public FakeEndpoint endpoint() {
        return this.endpoint;
    }

    public boolean isServerSide() {
        return this.endpoint != null;
    }

    /** The private data it carries (server side), as scripted. */
    public byte[] privateData() {
        return this.privateData.clone();
    }

    /** The server address a client's request was made for; {@code null} on the server side. */
    public String address() {
        return this.address;
    }

    /** The server port a client's request was made for; {@code null} on the server side. */
    public String port() {
        return this.port;
    }

    /**
     * A client's request: the address that names the device its peer was opened on (each address has a
     * device of its own unless {@link FakeLibRpma#sameDevice} says otherwise); a request to an address of
     * another device than this is what librdmacm refuses. {@code null} on the server side.
     */
    public String peerDevice() {
        return this.peerDevice;
    }

    /** Where its kernel CM id is. */
    public CmId cmIdState() {
        synchronized (this.fake.lock) {
            return this.cmIdState;
        }
    }

    public State state() {
        synchronized (this.fake.lock) {
            return this.state;
        }
    }

    /** Makes {@code rpma_conn_req_connect} fail with {@code returnCode} and {@code errno} (the request is consumed). */
    public FakeRequest failConnect(int returnCode, int errno) {
        synchronized (this.fake.lock) {
            this.connectFailure = new FakeLibRpma.Failure(returnCode, errno);
        }
        return this;
    }

    /**
     * Events to queue on the connection when connect succeeds, after the automatic
     * {@link RpmaConnectionEvent#ESTABLISHED} (see {@link FakeLibRpma#establishOnConnect(boolean)}).
     */
    public FakeRequest thenEvents(RpmaConnectionEvent... events) {
        synchronized (this.fake.lock) {
            for (RpmaConnectionEvent event : events) {
                this.eventsAfterConnect.add(event.code());
            }
        }
        return this;
    }

    /** The private data {@code rpma_conn_req_connect} sent; {@code null} when it passed none. */
    public byte[] connectPrivateData() {
        synchronized (this.fake.lock) {
            return (this.connectPrivateData != null) ? this.connectPrivateData.clone() : null;
        }
    }

    /** The connection a successful connect made, else {@code null}. */
    public FakeConnection connection() {
        synchronized (this.fake.lock) {
            return this.connection;
        }
    }

    /** The queue sizes and flags of the configuration it was created with ({@code NULL} = librpma's defaults). */
    public FakeLibRpma.ConnectionConfigValues config() {
        synchronized (this.fake.lock) {
            return (this.config != null) ? this.config.values() : null;
        }
    }

    /** Receives posted with {@code rpma_conn_req_recv}. */
    public List<PostedOperation> receives() {
        synchronized (this.fake.lock) {
            return List.copyOf(this.receives);
        }
    }

    /** Name of the thread that connected or deleted it, or {@code null}. */
    public String consumedOnThread() {
        synchronized (this.fake.lock) {
            return this.consumedOn;
        }
    }

    /** Waits until it was connected or deleted; returns the state then. */
    public State awaitConsumed(Duration timeout) {
        this.fake.await(timeout, () -> this.state != State.QUEUED && this.state != State.PENDING);
        return state();
    }

    @Override
    public String toString() {
        return "FakeRequest[" + (isServerSide() ? "server" : "client") + ", " + state() + "]";
    }
}
