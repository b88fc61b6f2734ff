/*
 * The data path's three hottest librpma calls as plain JNI functions (dev.rpma.jna.raw.JniDataPath).
 *
 * JNA's direct mapping goes through libffi and JNA's generic dispatch on every call; a profile of the
 * sample app's ping-pong loop in the soft-RoCE VM put 15 % of the loop's CPU there, about as much
 * as it spends above a C server doing the same work. A JNI function is a plain C call.
 *
 * librpma is not linked here: the Java side passes the address of each librpma function (found
 * through JNA in the library it already loaded), so this file needs only jni.h and works with
 * whichever librpma JNA bound. errno is kept per thread right after a failed call, before the JVM
 * can overwrite it, and read back with savedErrno().
 */
#include <errno.h>
#include <stdint.h>

#include <jni.h>

typedef int (*get_wc_fn)(void *cq, int num_entries, void *wc, int *num_entries_got);
typedef int (*send_fn)(void *conn, const void *src, size_t offset, size_t len, int flags, const void *op_context);
typedef int (*recv_fn)(void *conn, void *dst, size_t offset, size_t len, const void *op_context);

static __thread int saved_errno;

#define PTR(x) ((void *)(intptr_t)(x))

JNIEXPORT jint JNICALL Java_dev_rpma_jna_raw_JniDataPath_getWc(JNIEnv *env, jclass cls, jlong fn, jlong cq,
		jint num_entries, jlong wc, jlong num_entries_got)
{
	int rc = ((get_wc_fn)PTR(fn))(PTR(cq), num_entries, PTR(wc), (int *)PTR(num_entries_got));
	if (rc)
		saved_errno = errno;
	return rc;
}

JNIEXPORT jint JNICALL Java_dev_rpma_jna_raw_JniDataPath_send(JNIEnv *env, jclass cls, jlong fn, jlong conn,
		jlong src, jlong offset, jlong len, jint flags, jlong op_context)
{
	int rc = ((send_fn)PTR(fn))(PTR(conn), PTR(src), (size_t)offset, (size_t)len, flags, PTR(op_context));
	if (rc)
		saved_errno = errno;
	return rc;
}

JNIEXPORT jint JNICALL Java_dev_rpma_jna_raw_JniDataPath_recv(JNIEnv *env, jclass cls, jlong fn, jlong conn,
		jlong dst, jlong offset, jlong len, jlong op_context)
{
	int rc = ((recv_fn)PTR(fn))(PTR(conn), PTR(dst), (size_t)offset, (size_t)len, PTR(op_context));
	if (rc)
		saved_errno = errno;
	return rc;
}

JNIEXPORT jint JNICALL Java_dev_rpma_jna_raw_JniDataPath_savedErrno(JNIEnv *env, jclass cls)
{
	return saved_errno;
}
