package dev.rpma.server;

import dev.rpma.binding.RpmaException;

/**
 * The RDMA device an endpoint listened on is gone ({@code rdma link delete}, the driver unloaded, the
 * adapter failed): the endpoint stopped accepting, its sessions were lost, and what the server had
 * opened on the device was released so that the kernel can finish removing it. With device recovery
 * on, the server looks for the device again and listens anew once it is back; else restart the
 * application once the device is back.
 */
public class RpmaDeviceLostException extends RpmaAcceptorException {

    private static final long serialVersionUID = 1L;

    private final String address;

    public RpmaDeviceLostException(String address, RpmaException cause) {
        super("the RDMA device of " + address + " is gone (removed, or its driver unloaded); bring it back (for"
                + " soft-RoCE: rdma link add <name> type rxe netdev <interface>)", cause);
        this.address = address;
    }

    /** The address whose device is gone. */
    public String address() {
        return this.address;
    }
}
