package dev.rpma.binding.internal;

/**
 * The kernel CM ids that librpma leaves behind on the passive side, and their release.
 *
 * <p>librpma 1.2 and 1.3 (and its last commit) free a server-side connection request without
 * destroying its CM id in two places: {@code rpma_conn_req_delete} calls {@code rdma_reject} but never
 * {@code rdma_destroy_id}, and a failed {@code rpma_conn_req_connect} frees the request with its id still
 * alive. Each such id stays in the kernel until the endpoint's event channel closes, so a client that
 * loops connect and reject grows kernel memory without bound. librpma is discontinued, so the binding
 * releases those ids itself: it reads the id out of the request while the request is alive, which
 * relies on librpma's private {@code struct rpma_conn_req} layout and is done only when that layout
 * is found as expected, and destroys it once librpma is done with the request.
 *
 * <p>Internal API; the scripted fake implements it to model librpma's leak.
 */
public interface PassiveCmIds {

    /** Releases nothing: for a raw layer that cannot tell its requests' CM ids. */
    PassiveCmIds NONE = new PassiveCmIds() {

        @Override
        public long cmIdOf(long request, long peer, long ibvContext, long privateData, int privateDataLength) {
            return 0;
        }

        @Override
        public int destroyRejected(long cmId) {
            return 0;
        }

        @Override
        public int destroyAfterFailedAccept(long cmId) {
            return 0;
        }
    };

    /**
     * The CM id of the live server-side {@code request}, or 0 when the request is not laid out as
     * librpma 1.2/1.3 lay it out (then its id is left to librpma). {@code peer}, {@code ibvContext} and
     * the private data that {@code rpma_conn_req_get_private_data} returned for it are what the layout
     * is checked against.
     */
    long cmIdOf(long request, long peer, long ibvContext, long privateData, int privateDataLength);

    /**
     * Destroys the id of a request that {@code rpma_conn_req_delete} rejected; on the endpoint's owner
     * thread. No event of a rejected request comes to the endpoint's channel, so the wait of
     * {@code rdma_destroy_id} for unacknowledged events has nothing to wait for.
     *
     * @return 0, or the errno of {@code rdma_destroy_id}
     */
    int destroyRejected(long cmId);

    /**
     * Destroys the id of a request whose {@code rpma_conn_req_connect} failed. The id may have
     * events pending (a disconnect that librpma made after the accept), which the destroy would wait
     * for: it is first moved to an event channel of its own, whose events are taken and acknowledged.
     *
     * @return 0, or the errno of the first librdmacm call that failed
     */
    int destroyAfterFailedAccept(long cmId);
}
