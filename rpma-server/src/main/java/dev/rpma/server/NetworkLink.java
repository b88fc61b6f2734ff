package dev.rpma.server;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;

import org.jspecify.annotations.Nullable;

/**
 * The network link an endpoint's address is on. RoCE runs over an Ethernet interface, and with its
 * link down (no carrier, or set down) nothing reaches the endpoint, yet the RDMA device stays and
 * librpma reports nothing to a listener: connections only time out. So the link is looked at
 * directly, as the kernel reports it for the interface that holds the address.
 */
final class NetworkLink {

    private NetworkLink() {
    }

    /**
     * What is wrong with the link of {@code address}, or {@code null} when its interface is up and
     * running, or when that cannot be told: the lookup failed, or no interface has the address (as for
     * the addresses of a librpma fake or loopback, which no interface needs to hold; a real endpoint's
     * address that went away shows as a device removal or failing connections instead).
     */
    static @Nullable String problem(String address) {
        try {
            NetworkInterface link = NetworkInterface.getByInetAddress(InetAddress.getByName(address));
            if (link != null && !link.isUp()) {
                // the JDK's "up" is the kernel's IFF_UP and IFF_RUNNING: set down, or no carrier
                return "the network interface " + link.getName() + " of " + address + " is down (set down, or no"
                        + " carrier): no client reaches the endpoint until it is up";
            }
            return null;
        }
        catch (SocketException | UnknownHostException ex) {
            return null;
        }
    }
}
