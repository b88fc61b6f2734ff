package dev.rpma.binding;

/** Names of the {@code errno} values RDMA providers report (Linux numbering). */
public final class Errno {

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENFILE = 23;
    public static final int EMFILE = 24;
    public static final int ENOSPC = 28;
    public static final int ENODATA = 61;
    public static final int EPROTO = 71;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETUNREACH = 101;
    public static final int ECONNRESET = 104;
    public static final int ENOBUFS = 105;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EHOSTUNREACH = 113;

    private Errno() {
    }

    /** The symbolic name, e.g. {@code ENODEV}, or {@code "errno N"} for values not listed here. */
    public static String name(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EINTR -> "EINTR";
            case EIO -> "EIO";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENODEV -> "ENODEV";
            case EINVAL -> "EINVAL";
            case ENFILE -> "ENFILE";
            case EMFILE -> "EMFILE";
            case ENOSPC -> "ENOSPC";
            case ENODATA -> "ENODATA";
            case EPROTO -> "EPROTO";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case EADDRINUSE -> "EADDRINUSE";
            case EADDRNOTAVAIL -> "EADDRNOTAVAIL";
            case ENETUNREACH -> "ENETUNREACH";
            case ECONNRESET -> "ECONNRESET";
            case ENOBUFS -> "ENOBUFS";
            case ETIMEDOUT -> "ETIMEDOUT";
            case ECONNREFUSED -> "ECONNREFUSED";
            case EHOSTUNREACH -> "EHOSTUNREACH";
            default -> "errno " + errno;
        };
    }
}
