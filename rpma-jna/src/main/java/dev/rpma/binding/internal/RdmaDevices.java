package dev.rpma.binding.internal;

/**
 * librdmacm's list of RDMA devices, which it keeps per process.
 *
 * <p>librdmacm opens a device's context the first time a CM id is bound to it and keeps it open
 * after the last of them is destroyed; when the device is removed ({@code rdma link delete}, a driver
 * unloaded), it closes that context only when it next reads the device list. The kernel finishes the
 * removal only once every process closed its contexts of the device, so a process that released all it
 * had on the device must still make librdmacm read the list, or the removal waits for ever (measured
 * with soft-RoCE on Linux 6.1: {@code rdma link delete} blocked until the process exited; with the
 * list read after the release it returned in 0.2 s).
 *
 * <p>Internal API; the scripted fake implements it to tell whether a removed device was released.
 */
public interface RdmaDevices {

    /** Reads nothing: for a raw layer without librdmacm. */
    RdmaDevices NONE = () -> {
    };

    /**
     * Makes librdmacm read the device list ({@code rdma_get_devices}, {@code rdma_free_devices}), so that
     * it closes its contexts of the devices that are gone and no CM id uses any more.
     */
    void forgetRemoved();
}
