package dev.rpma.spring.boot.autoconfigure;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * Checks a listen address: RDMA binds to the IP of an RDMA-capable interface, so it must be an IP
 * literal that is neither loopback nor the wildcard.
 */
final class RpmaAddresses {

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private static final String HINT = "use the IP address of an RDMA-capable interface (e.g. the address of the"
            + " netdev a soft-RoCE device 'rxe0' sits on)";

    private RpmaAddresses() {
    }

    static void validate(String property, String address) {
        if (address == null || address.isBlank()) {
            throw new InvalidRpmaPropertyException(property, address, "is required: " + HINT);
        }
        String literal = address.trim();
        if (!IPV4.matcher(literal).matches() && !literal.contains(":")) {
            throw new InvalidRpmaPropertyException(property, address, "must be an IP address, not a host name: " + HINT);
        }
        InetAddress parsed;
        try {
            // an IP literal: parsed without any name lookup
            parsed = InetAddress.getByName(literal);
        }
        catch (UnknownHostException ex) {
            throw new InvalidRpmaPropertyException(property, address, "is not a valid IP address: " + HINT);
        }
        if (parsed.isLoopbackAddress()) {
            throw new InvalidRpmaPropertyException(property, address,
                    "is a loopback address, which RDMA cannot use (no RDMA device serves it): " + HINT);
        }
        if (parsed.isAnyLocalAddress()) {
            throw new InvalidRpmaPropertyException(property, address,
                    "is the wildcard address; librpma binds to one RDMA device: " + HINT);
        }
    }
}
