package dev.rpma.client;

import java.util.Collection;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The framed requests of one connection that were sent and not answered, by request id: open
 * addressing with linear probing in an array that doubles when it would be half full, so that a
 * request goes in and out without allocating (a {@code HashMap<Integer, ...>} boxes every id past 127
 * and makes a node per entry, on the loop, per request). Ids are given in sequence, so the requests in
 * flight take neighbouring places. Read and written on the connection's loop only.
 */
final class InFlightRequests {

    private @Nullable PendingRequest[] table = new PendingRequest[64];

    private int size;

    /** Adds {@code request} at its {@link PendingRequest#requestId}. */
    void put(PendingRequest request) {
        if (2 * (this.size + 1) > this.table.length) {
            @Nullable PendingRequest[] old = this.table;
            this.table = new PendingRequest[old.length * 2];
            for (PendingRequest moved : old) {
                if (moved != null) {
                    insert(moved);
                }
            }
        }
        insert(request);
        this.size++;
    }

    private void insert(PendingRequest request) {
        int mask = this.table.length - 1;
        int i = request.requestId & mask;
        while (this.table[i] != null) {
            i = (i + 1) & mask;
        }
        this.table[i] = request;
    }

    @Nullable PendingRequest get(int requestId) {
        int mask = this.table.length - 1;
        for (int i = requestId & mask;; i = (i + 1) & mask) {
            PendingRequest found = this.table[i];
            if (found == null || found.requestId == requestId) {
                return found;
            }
        }
    }

    /** Removes and returns the request of {@code requestId}; {@code null} when none is in flight. */
    @Nullable PendingRequest remove(int requestId) {
        int mask = this.table.length - 1;
        int i = requestId & mask;
        PendingRequest found;
        while ((found = this.table[i]) != null && found.requestId != requestId) {
            i = (i + 1) & mask;
        }
        if (found == null) {
            return null;
        }
        // backward shift: a later entry of the run moves into the gap unless its home lies between them
        int gap = i;
        PendingRequest next;
        for (int j = (gap + 1) & mask; (next = this.table[j]) != null; j = (j + 1) & mask) {
            int home = next.requestId & mask;
            if (((j - home) & mask) >= ((j - gap) & mask)) {
                this.table[gap] = next;
                gap = j;
            }
        }
        this.table[gap] = null;
        this.size--;
        return found;
    }

    int size() {
        return this.size;
    }

    /** Moves into {@code into} the requests whose deadline passed by {@code timer}'s sweep. */
    void takeDue(RequestTimer timer, List<PendingRequest> into) {
        int first = into.size();
        for (PendingRequest request : this.table) {
            if (request != null && timer.due(request)) {
                into.add(request);
            }
        }
        for (int i = first; i < into.size(); i++) {
            remove(into.get(i).requestId);
        }
    }

    /** Moves every request into {@code into} and empties the table. */
    void drainTo(Collection<PendingRequest> into) {
        for (int i = 0; i < this.table.length; i++) {
            PendingRequest request = this.table[i];
            if (request != null) {
                into.add(request);
                this.table[i] = null;
            }
        }
        this.size = 0;
    }
}
