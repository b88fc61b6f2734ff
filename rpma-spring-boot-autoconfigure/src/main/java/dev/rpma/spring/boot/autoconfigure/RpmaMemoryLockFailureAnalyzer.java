package dev.rpma.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.binding.io.MemoryLockLimit;
import dev.rpma.server.RpmaMemoryLockException;

/**
 * The memory the server registers passes the process's memory-lock limit. The description names the
 * limit, what needs how much, and (when a registration failed) librpma's diagnostic; the action the
 * amount to raise the limit to, in the units each place takes, and what to lower instead.
 */
class RpmaMemoryLockFailureAnalyzer extends AbstractFailureAnalyzer<RpmaMemoryLockException> {

    private static final long KIB = 1024;

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RpmaMemoryLockException cause) {
        MemoryLockLimit limit = cause.limit();
        String needed = MemoryLockLimit.size(cause.neededBytes());
        String description = "The RDMA server registers " + needed + " of memory when it starts ("
                + String.join("; ", cause.needs()) + "), which the kernel pins, but this process may lock only "
                + limit.describe() + " (RLIMIT_MEMLOCK"
                + ((limit.hardBytes() != limit.softBytes()) ? "; its hard limit is " + MemoryLockLimit.size(limit.hardBytes())
                        : "")
                + ")" + ((cause.rpmaCause() != null) ? ": " + cause.rpmaCause().diagnostic() : "") + ".";
        long kib = (cause.neededBytes() + KIB - 1) / KIB;
        String action = "Raise the memory-lock limit of the process to at least " + needed + " (" + kib + " KiB), or"
                + " make it unlimited, where it is started: 'ulimit -l unlimited' (or 'ulimit -l " + kib + "') in the"
                + " shell that starts the JVM; 'docker run --ulimit memlock=-1:-1'; 'LimitMEMLOCK=infinity' in the"
                + " [Service] section of its systemd unit; in Kubernetes, add the IPC_LOCK capability to the"
                + " container's securityContext (a process with CAP_IPC_LOCK has no limit), or raise the container"
                + " runtime's LimitMEMLOCK on the node. Or register less: smaller regions"
                + " ('rpma.server.regions.<name>.size'), or smaller or fewer message slots"
                + " ('rpma.server.messages.max-message-size', 'receive-slots', 'send-slots', 'shared-receive-slots', or the"
                + " same under 'rpma.server.endpoints.<name>').";
        return new FailureAnalysis(description, action, cause);
    }
}
