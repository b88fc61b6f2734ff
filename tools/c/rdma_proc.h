/*
 * rdma_proc.h - what the project's C programs share whatever side they play: the clock
 * their bounded waits use, and the process set-up of those that hold many RDMA connections
 * (the benchmark's baseline_server and load_client, the end-to-end tests' conn_holder).
 * Both C builds (tools/c/build-lib.sh) put this folder on the include path.
 * Everything here is static inline: a program that does not use a function gets no warning.
 */
#ifndef RDMA_PROC_H
#define RDMA_PROC_H

#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>

/* milliseconds on the monotonic clock */
static inline uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* each connection holds a CM event channel and a completion channel fd: allow as many fds
 * as the hard limit does */
static inline void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* SIGINT and SIGTERM blocked and delivered to a non-blocking signalfd, so that the program's
 * poll loop sees them; -1 (errno set) when the signalfd cannot be made */
static inline int stop_signal_fd(void)
{
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	return signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
}

#endif /* RDMA_PROC_H */
