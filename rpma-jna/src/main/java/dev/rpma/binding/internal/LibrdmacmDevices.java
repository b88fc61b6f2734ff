package dev.rpma.binding.internal;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link RdmaDevices} of the installed librdmacm. */
public final class LibrdmacmDevices implements RdmaDevices {

    private static final Logger logger = LoggerFactory.getLogger(LibrdmacmDevices.class);

    /** Binds librdmacm (which librpma itself links to), or returns {@link RdmaDevices#NONE} with a warning. */
    public static RdmaDevices bind() {
        try {
            Native.register(LibrdmacmDevices.class, NativeLibrary.getInstance("librdmacm.so.1"));
            return new LibrdmacmDevices();
        }
        catch (UnsatisfiedLinkError | NoClassDefFoundError ex) {
            logger.warn("librdmacm could not be bound ({}): a removed RDMA device stays open in this process, and its"
                    + " removal waits until the process exits", ex.getMessage());
            return NONE;
        }
    }

    private LibrdmacmDevices() {
    }

    @Override
    public void forgetRemoved() {
        // the list itself is not needed: reading it is what closes the contexts of removed devices
        long list = rdma_get_devices(0);
        if (list != 0) {
            rdma_free_devices(list);
        }
    }

    private static native long rdma_get_devices(long numDevices);

    private static native void rdma_free_devices(long list);
}
