package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

class InFlightRequestsTest {

    private static PendingRequest request(int id) {
        PendingRequest request = new PendingRequest(PendingRequest.Kind.REQUEST, new byte[0], "", new byte[0], false,
                Duration.ofSeconds(1), System.nanoTime(), null);
        request.requestId = id;
        return request;
    }

    @Test
    void findsEveryRequestAsAMapWouldThroughGrowthCollisionsAndRemovals() {
        InFlightRequests table = new InFlightRequests();
        Map<Integer, PendingRequest> model = new HashMap<>();
        Random random = new Random(18);
        int nextId = Integer.MAX_VALUE - 5000;
        List<Integer> ids = new ArrayList<>();
        for (int step = 0; step < 200_000; step++) {
            if (model.size() < 300 && (model.isEmpty() || random.nextInt(3) > 0)) {
                // in sequence, wrapping at 2^31 - 1 as the framing's ids do; now and then one far off
                int id = (random.nextInt(50) == 0) ? random.nextInt(Integer.MAX_VALUE) : nextId;
                nextId = (nextId == Integer.MAX_VALUE) ? 0 : nextId + 1;
                if (model.containsKey(id)) {
                    continue;
                }
                PendingRequest request = request(id);
                table.put(request);
                model.put(id, request);
                ids.add(id);
            }
            else {
                // mostly the oldest, as replies come, sometimes any
                int at = (random.nextInt(4) == 0) ? random.nextInt(ids.size()) : 0;
                int id = ids.remove(at);
                assertThat(table.remove(id)).isSameAs(model.remove(id));
                assertThat(table.remove(id)).isNull();
            }
            assertThat(table.size()).isEqualTo(model.size());
            if (step % 97 == 0) {
                for (Map.Entry<Integer, PendingRequest> entry : model.entrySet()) {
                    assertThat(table.get(entry.getKey())).isSameAs(entry.getValue());
                }
                assertThat(table.get(nextId)).isNull();
            }
        }
        List<PendingRequest> drained = new ArrayList<>();
        table.drainTo(drained);
        assertThat(drained).containsExactlyInAnyOrderElementsOf(model.values());
        assertThat(table.size()).isZero();
        assertThat(table.get(ids.get(0))).isNull();
    }
}
