package dev.rpma.server;

import java.nio.file.Path;

import org.jspecify.annotations.Nullable;

/** A region's file could not be mapped or registered as its backing store asks. */
public class RpmaRegionStoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Path path;

    private final RpmaBackingStore.Kind kind;

    public RpmaRegionStoreException(Path path, RpmaBackingStore.Kind kind, String reason, @Nullable Throwable cause) {
        super("The " + kind.name().toLowerCase(java.util.Locale.ROOT) + " region in " + path + " cannot be used: " + reason,
                cause);
        this.path = path;
        this.kind = kind;
    }

    public Path path() {
        return this.path;
    }

    public RpmaBackingStore.Kind kind() {
        return this.kind;
    }
}
