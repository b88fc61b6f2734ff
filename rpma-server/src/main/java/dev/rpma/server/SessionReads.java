package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.CompletionStatus;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaRemoteMemoryRegion;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * The reads of one session ({@link RpmaSession#read}): the client's memory into a region of the
 * server, with {@code rpma_read}, on the session's event loop.
 *
 * <p>Arguments are checked on the caller's thread, which sees the exception. A descriptor the client
 * sent is made into a remote region ({@code rpma_mr_remote_from_descriptor}) once per session, whose
 * size bounds the read; each is deleted once, when the session ends. On the loop a read is posted
 * signaled, its work request id {@link #ONE_SIDED} with its index (the opcode of a failed completion
 * is undefined). At most {@link EndpointContext#readsInFlight} are in flight, what the connection's
 * send and completion queues have room for; the others wait on the loop, in order, and go as
 * completions free places. A completion completes its read's future on the loop: the data path takes
 * it from the completion queue when the session has one, else this class does, watching the queue
 * from the first read on.
 *
 * <p>A failed completion fails its read with the status and ends the session, whose queue pair is in
 * the error state after it. A session that ends fails the reads in flight and those waiting.
 */
final class SessionReads {

    /** The bit of a read's work request id; a send's is bit 32, a receive's neither. */
    static final long ONE_SIDED = 1L << 33;

    /** Distinct regions of the client a session reads from, at most: each is native memory until it ends. */
    static final int MAX_REMOTE_REGIONS = 16;

    private final ServerSession session;

    private final EndpointContext endpoint;

    private final RpmaConnection connection;

    private final RpmaEventLoop loop;

    private final RpmaCompletions batch;

    /** Whether the session has a data path, which takes the completions and hands the reads' over. */
    private final boolean dataPath;

    /** The client's regions by descriptor; guarded by itself: callers make them, the loop deletes them. */
    private final Map<ByteBuffer, RpmaRemoteMemoryRegion> remotes = new HashMap<>();

    /** Whether the session ended and its remote regions were deleted; guarded by {@link #remotes}. */
    private boolean remotesDeleted;

    // the loop's from here on

    /** The reads in flight by the index in their work request id. */
    private final Read[] inFlight;

    private int inFlightCount;

    private final ArrayDeque<Read> waiting = new ArrayDeque<>();

    private boolean stopped;

    private boolean watching;

    private int cqFd = -1;

    private long cqRegistration;

    /** A batch's completions copied out of the loop's batch, so a read's callback may poll it again. */
    private long[] contexts = new long[0];

    private int[] statuses = new int[0];

    SessionReads(ServerSession session, EndpointContext endpoint, RpmaConnection connection, RpmaEventLoop loop,
            RpmaCompletions batch, boolean dataPath) {
        this.session = session;
        this.endpoint = endpoint;
        this.connection = connection;
        this.loop = loop;
        this.batch = batch;
        this.dataPath = dataPath;
        this.inFlight = new Read[endpoint.readsInFlight];
    }

    /** One read, from the caller to its completion. */
    private static final class Read {

        final RpmaMemoryRegion destination;

        final String region;

        final int offset;

        final RpmaRemoteMemoryRegion source;

        final long sourceOffset;

        final int length;

        final CompletableFuture<Void> future = new CompletableFuture<>();

        Read(RpmaMemoryRegion destination, String region, int offset, RpmaRemoteMemoryRegion source, long sourceOffset,
                int length) {
            this.destination = destination;
            this.region = region;
            this.offset = offset;
            this.source = source;
            this.sourceOffset = sourceOffset;
            this.length = length;
        }

        @Override
        public String toString() {
            return "rpma_read of " + this.length + " bytes at offset " + this.sourceOffset + " of the client's region"
                    + " into region '" + this.region + "' at offset " + this.offset;
        }
    }

    // ---------------------------------------------------------------- the caller's thread

    /** {@link RpmaSession#read}, once the session is established; any thread. */
    CompletableFuture<Void> read(byte[] descriptor, long remoteOffset, String region, int offset, int length) {
        if (length <= 0) {
            throw new IllegalArgumentException("A read of " + length + " bytes: read at least one byte");
        }
        if (this.inFlight.length == 0) {
            throw new IllegalStateException("The sessions of endpoint '" + this.endpoint.name() + "' have no room for"
                    + " reads: their connections' send and completion queues hold the message slots alone. Raise the"
                    + " endpoint's connection sq-size and cq-size by the reads a session may have in flight (at most "
                    + RpmaQueueSizes.MAX_READS_IN_FLIGHT + " are used)");
        }
        RpmaMemoryRegion destination = this.endpoint.regions.readDestination(region, this.endpoint.name(), offset,
                length);
        if (descriptor.length != RpmaMemoryRegion.DESCRIPTOR_SIZE) {
            throw new IllegalArgumentException("A memory region descriptor is " + RpmaMemoryRegion.DESCRIPTOR_SIZE
                    + " bytes (what rpma_mr_get_descriptor gives the client, e.g. in RpmaCommonData), got "
                    + descriptor.length);
        }
        Read read = new Read(destination, region, offset, remote(descriptor, remoteOffset, length), remoteOffset,
                length);
        if (this.loop.inLoop()) {
            submit(read);
        }
        else if (!this.loop.tryExecute(() -> submit(read))) {
            fail(read, read + " was not posted: session " + this.session.id() + " has ended, its event loop stopped");
        }
        return read.future;
    }

    /** The client's region the descriptor names, made once per session, checked to hold the range. */
    private RpmaRemoteMemoryRegion remote(byte[] descriptor, long offset, int length) {
        synchronized (this.remotes) {
            if (this.remotesDeleted) {
                throw new IllegalStateException("Session " + this.session.id() + " of endpoint '" + this.endpoint.name()
                        + "' has ended; it reads no more");
            }
            ByteBuffer key = ByteBuffer.wrap(descriptor.clone());
            RpmaRemoteMemoryRegion source = this.remotes.get(key);
            if (source == null) {
                if (this.remotes.size() >= MAX_REMOTE_REGIONS) {
                    throw new IllegalStateException("Session " + this.session.id() + " reads from " + MAX_REMOTE_REGIONS
                            + " regions of its client already, the most a session keeps: read from those");
                }
                try {
                    source = this.endpoint.rpma.remoteMemoryRegion(key.array());
                }
                catch (RpmaException ex) {
                    throw new IllegalArgumentException("The descriptor names no memory region"
                            + " (rpma_mr_remote_from_descriptor: " + ex.getMessage() + ")", ex);
                }
                this.remotes.put(key, source);
            }
            long size = source.size();
            if (offset < 0 || offset > size - length) {
                throw new IllegalArgumentException("A read of " + length + " bytes at offset " + offset + " is outside"
                        + " the client's region of " + size + " bytes (rpma_mr_remote_get_size): read within it");
            }
            return source;
        }
    }

    // ---------------------------------------------------------------- the loop

    private void submit(Read read) {
        if (this.stopped) {
            fail(read, read + " was not posted: session " + this.session.id() + " has ended");
            return;
        }
        this.waiting.add(read);
        postWaiting();
    }

    /** Posts what waits while there is room; on a session without data path, watching the queue first. */
    private void postWaiting() {
        while (!this.stopped && !this.waiting.isEmpty() && this.inFlightCount < this.inFlight.length) {
            if (!this.dataPath && !this.watching) {
                // a failure ends the session, which fails what waits
                watch();
                continue;
            }
            post(this.waiting.poll());
        }
    }

    private void post(Read read) {
        int index = 0;
        while (this.inFlight[index] != null) {
            index++;
        }
        try {
            this.connection.read(read.destination, read.offset, read.source, read.sourceOffset, read.length,
                    CompletionMode.ALWAYS, ONE_SIDED | index);
        }
        catch (RpmaException | IllegalStateException ex) {
            String detail = "rpma_read failed: " + ex.getMessage();
            if (ex instanceof RpmaException rpma) {
                this.endpoint.statistics.recordError(rpma);
            }
            read.future.completeExceptionally(new RpmaReadException(read + " failed to post: " + ex.getMessage(), -1, ex));
            this.session.end(RpmaSessionEnd.Reason.ERROR, detail, ex);
            return;
        }
        this.inFlight[index] = read;
        this.inFlightCount++;
    }

    /** Takes the completions of a session without data path from now on: its first read is about to be posted. */
    private void watch() {
        try {
            RpmaCompletionQueue cq = this.connection.completionQueue();
            this.cqFd = cq.fd();
            FileDescriptors.setBlocking(this.cqFd, false);
            this.cqRegistration = this.loop.register(this.cqFd, this.session, ServerSession.KIND_COMPLETIONS);
        }
        catch (RuntimeException ex) {
            if (ex instanceof RpmaException rpma) {
                this.endpoint.statistics.recordError(rpma);
            }
            this.session.end(RpmaSessionEnd.Reason.ERROR, "its completion queue could not be watched for reads: "
                    + ex.getMessage(), ex);
            return;
        }
        this.watching = true;
        this.contexts = new long[this.batch.capacity()];
        this.statuses = new int[this.batch.capacity()];
    }

    /** The completion channel of a session without data path reported an event: take it, then the completions. */
    void onCompletionEvent() {
        if (!this.watching) {
            return;
        }
        try {
            this.connection.completionQueue().await();
        }
        catch (RpmaException ex) {
            failSession(ex, "rpma_cq_wait");
            return;
        }
        drain();
    }

    /** Before a session without data path ends on the client's CLOSED or a LOST: the reads that completed first. */
    void drainBeforeEnd() {
        if (this.watching) {
            drain();
        }
    }

    /** Whether a read is in flight: its completion will come to the session's queue. */
    boolean hasInFlight() {
        return this.inFlightCount > 0;
    }

    private void drain() {
        int count;
        do {
            try {
                count = this.connection.completionQueue().poll(this.batch);
            }
            catch (RpmaException ex) {
                failSession(ex, "rpma_cq_get_wc");
                return;
            }
            for (int i = 0; i < count; i++) {
                this.contexts[i] = this.batch.context(i);
                this.statuses[i] = this.batch.status(i);
            }
            for (int i = 0; i < count && !this.stopped; i++) {
                if ((this.contexts[i] & ONE_SIDED) != 0) {
                    completed((int) this.contexts[i], this.statuses[i]);
                }
            }
        }
        while (count == this.batch.capacity() && !this.stopped);
    }

    private void failSession(RpmaException ex, String function) {
        this.endpoint.statistics.recordError(ex);
        this.session.end(RpmaSessionEnd.Reason.ERROR, function + " failed: " + ex.getMessage(), ex);
    }

    /**
     * The completion of the read posted with index {@code index}: its future completes (or fails, and
     * the session ends), and what waits is posted. On the loop.
     */
    void completed(int index, int status) {
        Read read = (index >= 0 && index < this.inFlight.length) ? this.inFlight[index] : null;
        if (read == null) {
            return;
        }
        this.inFlight[index] = null;
        this.inFlightCount--;
        if (status == CompletionStatus.SUCCESS) {
            read.future.complete(null);
            postWaiting();
            return;
        }
        String detail = read + " completed with " + CompletionStatus.describe(status) + whyItFailed(status);
        // the session ends first, so that it ends for this reason whatever the read's callbacks do
        if (status == CompletionStatus.WR_FLUSH_ERR) {
            this.session.queuePairFlushed("the " + read);
        }
        else {
            this.endpoint.statistics.recordFailedCompletion(RpmaEndpointStatistics.WorkRequest.READ);
            this.endpoint.warnings.warn("failed-completion", "Session " + this.session.id() + " of endpoint '"
                    + this.endpoint.name() + "' ends: " + detail);
            this.session.end(RpmaSessionEnd.Reason.ERROR, detail, null);
        }
        read.future.completeExceptionally(new RpmaReadException(detail, status));
    }

    private static String whyItFailed(int status) {
        return switch (status) {
            case CompletionStatus.REM_ACCESS_ERR -> ": the client's region does not allow it (registered without"
                    + " READ_SRC) or the range lies outside it";
            case CompletionStatus.LOC_PROT_ERR -> ": the server's region is not registered as a read destination on"
                    + " this connection's peer";
            case CompletionStatus.RETRY_EXC_ERR -> ": the client did not answer (it or its link is gone)";
            default -> "";
        };
    }

    /**
     * The session ends (before its connection is deleted): the completion channel is no longer watched,
     * the reads in flight and waiting fail, and the client's regions are deleted. Once; on the loop.
     */
    void stop(RpmaSessionEnd how) {
        if (this.stopped) {
            return;
        }
        this.stopped = true;
        if (this.watching) {
            this.watching = false;
            this.loop.unregister(this.cqFd, this.cqRegistration);
        }
        for (int i = 0; i < this.inFlight.length; i++) {
            Read read = this.inFlight[i];
            if (read != null) {
                this.inFlight[i] = null;
                fail(read, read + " did not complete: " + ended(how) + " with it in flight");
            }
        }
        this.inFlightCount = 0;
        Read read;
        while ((read = this.waiting.poll()) != null) {
            fail(read, read + " was not posted: " + ended(how) + " while it waited");
        }
        deleteRemotes();
    }

    /** Built only for a read that fails: most sessions end with none, and it took a quarter of an end on the loop. */
    private String ended(RpmaSessionEnd how) {
        return "session " + this.session.id() + " of endpoint '" + this.endpoint.name() + "' ended ("
                + how.reason().tag() + ": " + how.detail() + ")";
    }

    private void deleteRemotes() {
        synchronized (this.remotes) {
            this.remotesDeleted = true;
            for (RpmaRemoteMemoryRegion remote : this.remotes.values()) {
                try {
                    remote.close();
                }
                catch (RpmaException ex) {
                    this.endpoint.warnings.warn("remote-region", "Deleting a region of session " + this.session.id()
                            + "'s client failed", ex);
                }
            }
            this.remotes.clear();
        }
    }

    private void fail(Read read, String message) {
        read.future.completeExceptionally(new RpmaReadException(message, -1));
    }
}
