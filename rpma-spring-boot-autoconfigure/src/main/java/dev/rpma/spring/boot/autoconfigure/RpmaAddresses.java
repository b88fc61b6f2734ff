package dev.rpma.spring.boot.autoconfigure;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

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

    private RpmaAddresses() {
    }

    static void validate(String property, String address) {
        if (address == null || address.isBlank()) {
            throw invalid(property, address, "is required");
        }
        String literal = address.trim();
        String placeholder = placeholder(literal);
        if (placeholder != null) {
            // Boot leaves a placeholder it cannot resolve in the value as it was written
            throw new InvalidRpmaPropertyException(property, address, "contains the placeholder '${" + placeholder
                    + "}', which is not defined", "Define '" + placeholder + "' (as an environment variable, a system"
                            + " property or a property of the application), or set '" + property
                            + "' to the IP address itself");
        }
        InetAddress parsed;
        try {
            parsed = parse(literal);
        }
        catch (UnknownHostException ex) {
            throw invalid(property, address, "is not a valid IP address");
        }
        if (parsed == null) {
            throw invalid(property, address, "must be an IP address, not a host name");
        }
        if (parsed.isLoopbackAddress()) {
            throw invalid(property, address, "is a loopback address, which RDMA cannot use (no RDMA device serves it)");
        }
        if (parsed.isAnyLocalAddress()) {
            throw invalid(property, address, "is the wildcard address; librpma binds to one RDMA device");
        }
    }

    private static InvalidRpmaPropertyException invalid(String property, String address, String reason) {
        return new InvalidRpmaPropertyException(property, address, reason, "Set '" + property + "' to the IP address of"
                + " an RDMA-capable interface of this machine, e.g. of the interface a soft-RoCE device sits on"
                + " ('rdma link show' lists the RDMA devices and their interfaces)");
    }

    /** The name in the first {@code ${...}} of the value, without its default; {@code null} when there is none. */
    private static @Nullable String placeholder(String value) {
        int start = value.indexOf("${");
        if (start < 0) {
            return null;
        }
        int end = value.indexOf('}', start);
        String name = value.substring(start + 2, (end < 0) ? value.length() : end);
        int colon = name.indexOf(':');
        return (colon < 0) ? name : name.substring(0, colon);
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
