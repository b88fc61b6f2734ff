package dev.rpma.binding.testing;

/** A librpma object of the fake: guarded by the fake's lock, and known to callers by its handle. */
abstract class FakeObject {

    final FakeLibRpma fake;

    long handle;

    FakeObject(FakeLibRpma fake) {
        this.fake = fake;
    }

    /**
     * The fake {@code struct rpma_... *} librpma would have returned for this object; 0 until the
     * call that creates it (an endpoint's listen, a request's next_conn_req).
     */
    public long handle() {
        synchronized (this.fake.lock) {
            return this.handle;
        }
    }
}
