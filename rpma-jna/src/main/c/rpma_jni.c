/*
 * librpma's calls of the data path and of every connection, and libc's poll, fcntl and epoll, as plain
 * JNI functions (dev.rpma.binding.internal.JniCalls).
 *
 * JNA's direct mapping goes through libffi and JNA's generic dispatch on every call; a profile of the
 * sample app's ping-pong loop in the soft-RoCE VM put 15 % of the loop's CPU there, about as much
 * as it spends above a C server doing the same work, and 4-5 % of the acceptor's CPU per connection.
 * A JNI function is a plain C call.
 *
 * librpma is not linked here: the Java side passes the address of each librpma function (found
 * through JNA in the library it already loaded), so this file needs only jni.h and works with
 * whichever librpma JNA bound. The connection path's functions take only pointers, so three shapes
 * (one, two or three pointer arguments) serve them all. errno is kept per thread right after a failed
 * call, before the JVM can overwrite it, and read back with savedErrno().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>

#include <jni.h>

typedef int (*ptr1_fn)(void *a);
typedef int (*ptr2_fn)(void *a, void *b);
typedef int (*ptr3_fn)(void *a, void *b, void *c);
typedef int (*get_wc_fn)(void *cq, int num_entries, void *wc, int *num_entries_got);
typedef int (*send_fn)(void *conn, const void *src, size_t offset, size_t len, int flags, const void *op_context);
typedef int (*recv_fn)(void *conn, void *dst, size_t offset, size_t len, const void *op_context);

static __thread int saved_errno;

#define PTR(x) ((void *)(intptr_t)(x))

static inline jint kept(int rc)
{
	if (rc)
		saved_errno = errno;
	return rc;
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_call1(JNIEnv *env, jclass cls, jlong fn, jlong a)
{
	return kept(((ptr1_fn)PTR(fn))(PTR(a)));
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_call2(JNIEnv *env, jclass cls, jlong fn, jlong a, jlong b)
{
	return kept(((ptr2_fn)PTR(fn))(PTR(a), PTR(b)));
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_call3(JNIEnv *env, jclass cls, jlong fn, jlong a, jlong b,
		jlong c)
{
	return kept(((ptr3_fn)PTR(fn))(PTR(a), PTR(b), PTR(c)));
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_getWc(JNIEnv *env, jclass cls, jlong fn, jlong cq,
		jint num_entries, jlong wc, jlong num_entries_got)
{
	return kept(((get_wc_fn)PTR(fn))(PTR(cq), num_entries, PTR(wc), (int *)PTR(num_entries_got)));
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_send(JNIEnv *env, jclass cls, jlong fn, jlong conn,
		jlong src, jlong offset, jlong len, jint flags, jlong op_context)
{
	return kept(((send_fn)PTR(fn))(PTR(conn), PTR(src), (size_t)offset, (size_t)len, flags, PTR(op_context)));
}

/* rpma_recv, rpma_conn_req_recv and rpma_srq_recv: the same arguments, on a connection, a request or a shared receive queue */
JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_recv(JNIEnv *env, jclass cls, jlong fn, jlong conn,
		jlong dst, jlong offset, jlong len, jlong op_context)
{
	return kept(((recv_fn)PTR(fn))(PTR(conn), PTR(dst), (size_t)offset, (size_t)len, PTR(op_context)));
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_poll(JNIEnv *env, jclass cls, jlong fds, jlong nfds,
		jint timeout)
{
	int rc = poll((struct pollfd *)PTR(fds), (nfds_t)nfds, timeout);
	if (rc < 0)
		saved_errno = errno;
	return rc;
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_fcntl(JNIEnv *env, jclass cls, jint fd, jint cmd, jint arg)
{
	int rc = fcntl(fd, cmd, arg);
	if (rc < 0)
		saved_errno = errno;
	return rc;
}

/* struct epoll_event is packed on x86-64: the Java side passes its two fields, not the struct */
JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_epollCtl(JNIEnv *env, jclass cls, jint epfd, jint op, jint fd,
		jint events, jlong data)
{
	struct epoll_event event = { .events = (uint32_t)events, .data.u64 = (uint64_t)data };
	int rc = epoll_ctl(epfd, op, fd, &event);
	if (rc < 0)
		saved_errno = errno;
	return rc;
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_epollWait(JNIEnv *env, jclass cls, jint epfd, jlong events,
		jint max_events, jint timeout)
{
	int rc = epoll_wait(epfd, (struct epoll_event *)PTR(events), max_events, timeout);
	if (rc < 0)
		saved_errno = errno;
	return rc;
}

JNIEXPORT jint JNICALL Java_dev_rpma_binding_internal_JniCalls_savedErrno(JNIEnv *env, jclass cls)
{
	return saved_errno;
}
