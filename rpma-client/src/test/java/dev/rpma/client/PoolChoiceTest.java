package dev.rpma.client;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PoolChoiceTest {

    private static final RpmaClientConnectionState CONNECTING = RpmaClientConnectionState.CONNECTING;

    private static final RpmaClientConnectionState ESTABLISHED = RpmaClientConnectionState.ESTABLISHED;

    private static final RpmaClientConnectionState BACKING_OFF = RpmaClientConnectionState.BACKING_OFF;

    @Test
    void connectionsEstablishedWhileThePoolIsLookedAtAreStillChosen() {
        // each connection's loop establishes it right after the choice read its state once
        Place[] pool = { new Place(0, CONNECTING, ESTABLISHED), new Place(0, CONNECTING, ESTABLISHED),
                new Place(0, CONNECTING, ESTABLISHED) };

        Place chosen = PoolChoice.choose(pool, null, 0, true);

        assertThat(chosen).isSameAs(pool[0]);
        assertThat(pool).allSatisfy((place) -> assertThat(place.reads).isEqualTo(1));
    }

    @Test
    void anEstablishedConnectionIsPreferredToALessLoadedConnectingOne() {
        Place[] pool = { new Place(0, CONNECTING), new Place(5, ESTABLISHED), new Place(1, CONNECTING) };

        assertThat(PoolChoice.choose(pool, null, 0, true)).isSameAs(pool[1]);
    }

    @Test
    void theLeastLoadedEstablishedConnectionIsChosenAndEqualsTakeTurnsFromTheStart() {
        Place[] pool = { new Place(2, ESTABLISHED), new Place(1, ESTABLISHED), new Place(1, ESTABLISHED),
                new Place(0, BACKING_OFF) };

        assertThat(PoolChoice.choose(pool, null, 0, true)).isSameAs(pool[1]);
        assertThat(PoolChoice.choose(pool, null, 2, true)).isSameAs(pool[2]);
        assertThat(PoolChoice.choose(pool, null, 3, true)).isSameAs(pool[1]);
    }

    @Test
    void withoutAnEstablishedConnectionTheLeastLoadedConnectingOneIsChosenWhenAskedFor() {
        Place[] pool = { new Place(3, CONNECTING), new Place(0, BACKING_OFF), new Place(1, CONNECTING) };

        assertThat(PoolChoice.choose(pool, null, 0, true)).isSameAs(pool[2]);
        assertThat(PoolChoice.choose(pool, null, 0, false)).isNull();
    }

    @Test
    void theConnectionAskingIsNotChosenAndNoneOpenGivesNone() {
        Place[] pool = { new Place(0, ESTABLISHED), new Place(4, CONNECTING), new Place(0, BACKING_OFF) };

        assertThat(PoolChoice.choose(pool, pool[0], 0, true)).isSameAs(pool[1]);
        assertThat(PoolChoice.choose(pool, pool[0], 0, false)).isNull();
        Place[] closed = { new Place(0, BACKING_OFF), new Place(0, RpmaClientConnectionState.CLOSED) };
        assertThat(PoolChoice.choose(closed, null, 1, true)).isNull();
    }

    /** A connection whose state moves on to the next of {@code states} each time it is read, as its loop moves it. */
    private static final class Place implements PoolChoice.Candidate {

        private final int load;

        private final Deque<RpmaClientConnectionState> states;

        int reads;

        Place(int load, RpmaClientConnectionState... states) {
            this.load = load;
            this.states = new ArrayDeque<>(Arrays.asList(states));
        }

        @Override
        public RpmaClientConnectionState state() {
            this.reads++;
            return (this.states.size() > 1) ? this.states.poll() : this.states.peek();
        }

        @Override
        public int load() {
            return this.load;
        }

        @Override
        public String toString() {
            return "Place[" + this.load + ", " + this.states + "]";
        }
    }
}
