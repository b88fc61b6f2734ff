package dev.rpma.server;

import org.jspecify.annotations.Nullable;

/**
 * Sessions by queue pair number, for a shared receive queue whose completions name their connection
 * only by it: open addressing with linear probing over int keys, so that a look-up per message
 * allocates nothing (a boxed key would). Not thread-safe: its event loop's.
 *
 * @param <T> what is found by number
 */
final class QueuePairTable<T> {

    private int[] keys;

    private @Nullable Object[] values;

    private int size;

    QueuePairTable() {
        this.keys = new int[16];
        this.values = new Object[16];
    }

    int size() {
        return this.size;
    }

    @SuppressWarnings("unchecked")
    @Nullable T get(int qp) {
        int mask = this.keys.length - 1;
        for (int i = mix(qp) & mask;; i = (i + 1) & mask) {
            Object value = this.values[i];
            if (value == null) {
                return null;
            }
            if (this.keys[i] == qp) {
                return (T) value;
            }
        }
    }

    /** Maps {@code qp} to {@code value}; the previous value of {@code qp} is replaced. */
    void put(int qp, T value) {
        if ((this.size + 1) * 2 > this.keys.length) {
            grow();
        }
        int mask = this.keys.length - 1;
        int i = mix(qp) & mask;
        while (this.values[i] != null && this.keys[i] != qp) {
            i = (i + 1) & mask;
        }
        if (this.values[i] == null) {
            this.size++;
        }
        this.keys[i] = qp;
        this.values[i] = value;
    }

    /** Removes {@code qp} when it maps to {@code value} (a newer session may have its number by now). */
    void remove(int qp, T value) {
        int mask = this.keys.length - 1;
        int i = mix(qp) & mask;
        while (this.values[i] != null) {
            if (this.keys[i] == qp) {
                if (this.values[i] != value) {
                    return;
                }
                this.values[i] = null;
                this.size--;
                closeGap(i, mask);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /** Moves back the entries after a removed one that would no longer be found past the gap. */
    private void closeGap(int gap, int mask) {
        for (int i = (gap + 1) & mask; this.values[i] != null; i = (i + 1) & mask) {
            int home = mix(this.keys[i]) & mask;
            // the entry at i may fill the gap when its home is not in (gap, i], cyclically
            boolean movable = (gap <= i) ? (home <= gap || home > i) : (home <= gap && home > i);
            if (movable) {
                this.keys[gap] = this.keys[i];
                this.values[gap] = this.values[i];
                this.values[i] = null;
                gap = i;
            }
        }
    }

    @SuppressWarnings("unchecked")
    private void grow() {
        int[] oldKeys = this.keys;
        Object[] oldValues = this.values;
        this.keys = new int[oldKeys.length * 2];
        this.values = new Object[oldKeys.length * 2];
        this.size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                put(oldKeys[i], (T) oldValues[i]);
            }
        }
    }

    /** Queue pair numbers are handed out in sequence: spread them over the table. */
    private static int mix(int qp) {
        int h = qp * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    @Override
    public String toString() {
        return "QueuePairTable[" + this.size + " of " + this.keys.length + "]";
    }
}
