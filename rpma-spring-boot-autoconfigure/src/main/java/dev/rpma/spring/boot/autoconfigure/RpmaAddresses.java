package dev.rpma.spring.boot.autoconfigure;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks a listen address: RDMA binds to the IP of an RDMA-capable interface, so it must be an IP
 * literal that is neither loopback nor the wildcard.
 */
final class RpmaAddresses {

    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    /**
     * Starts with a hex digit or ':' and contains ':', so {@link InetAddress#getByName} parses it as an
     * IPv6 literal (or fails) and never asks a name service.
     */
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:][0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(%[^\\s%]+)?");

    private static final String HINT = "use the IP address of an RDMA-capable interface (e.g. the address of the"
            + " netdev a soft-RoCE device 'rxe0' sits on)";

    private RpmaAddresses() {
    }

    static void validate(String property, String address) {
        if (address == null || address.isBlank()) {
            throw new InvalidRpmaPropertyException(property, address, "is required: " + HINT);
        }
        String literal = address.trim();
        InetAddress parsed;
        try {
            parsed = parse(literal);
        }
        catch (UnknownHostException ex) {
            throw new InvalidRpmaPropertyException(property, address, "is not a valid IP address: " + HINT);
        }
        if (parsed == null) {
            throw new InvalidRpmaPropertyException(property, address, "must be an IP address, not a host name: " + HINT);
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

    /** The address of an IP literal, {@code null} for anything else; never looks a name up. */
    private static InetAddress parse(String literal) throws UnknownHostException {
        Matcher ipv4 = IPV4.matcher(literal);
        if (ipv4.matches()) {
            byte[] octets = new byte[4];
            for (int i = 0; i < 4; i++) {
                String text = ipv4.group(i + 1);
                int octet = Integer.parseInt(text);
                // glibc's getaddrinfo, under rdma_getaddrinfo, reads a leading zero as octal: "010" is 8
                if (octet > 255 || (text.length() > 1 && text.charAt(0) == '0')) {
                    throw new UnknownHostException(literal);
                }
                octets[i] = (byte) octet;
            }
            return InetAddress.getByAddress(octets);
        }
        if (IPV6.matcher(literal).matches()) {
            return InetAddress.getByName(literal);
        }
        return null;
    }
}
