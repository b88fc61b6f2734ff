package dev.rpma.server;

import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaFailureKind;
import dev.rpma.binding.io.MemoryLockLimit;

/**
 * The server cannot start under the process's memory-lock limit: the memory it registers (its
 * regions, shared receive queues and first sessions' slots) pins more than {@code RLIMIT_MEMLOCK}
 * allows. Thrown by {@link RpmaServer#listen()} before anything is registered, or when a registration
 * at listen failed with {@code ENOMEM} (then with that {@link RpmaException} as its cause).
 */
public class RpmaMemoryLockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final MemoryLockLimit limit;

    private final long neededBytes;

    private final List<String> needs;

    /**
     * @param needs what registers memory, each with its bytes, e.g.
     *     {@code region 'catalog' on the peer of 198.18.0.1 1 MiB}
     * @param cause the registration that failed, or {@code null} when the limit was found too small first
     */
    public RpmaMemoryLockException(MemoryLockLimit limit, long neededBytes, List<?> needs,
            @Nullable RpmaException cause) {
        super(message(limit, neededBytes, needs, cause), cause);
        this.limit = limit;
        this.neededBytes = neededBytes;
        this.needs = needs.stream().map(String::valueOf).toList();
    }

    private static String message(MemoryLockLimit limit, long neededBytes, List<?> needs,
            @Nullable RpmaException cause) {
        String what = needs.stream().map(String::valueOf).collect(Collectors.joining("; "));
        String problem = (cause != null)
                ? "Registering memory failed as the RDMA server started (" + cause.diagnostic() + "): it registers "
                : "The RDMA server registers ";
        return problem + MemoryLockLimit.size(neededBytes) + " when it starts (" + what + "), and this process may"
                + " lock " + limit.describe() + " (RLIMIT_MEMLOCK). " + RpmaFailureKind.MEMORY_LOCK_ADVICE;
    }

    /** The process's limit when the server started. */
    public MemoryLockLimit limit() {
        return this.limit;
    }

    /** The bytes the server's registrations pin when it starts. */
    public long neededBytes() {
        return this.neededBytes;
    }

    /** What registers memory at the start, each with its bytes. */
    public List<String> needs() {
        return this.needs;
    }

    /** The registration that failed with {@code ENOMEM}, or {@code null} when the check found the limit too small. */
    public @Nullable RpmaException rpmaCause() {
        return (RpmaException) getCause();
    }
}
