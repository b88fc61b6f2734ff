package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

class QueuePairTableTest {

    @Test
    void findsWhatWasPutAndForgetsWhatWasRemovedThroughGrowthAndCollisions() {
        QueuePairTable<String> table = new QueuePairTable<>();
        Map<Integer, String> expected = new HashMap<>();
        Random random = new Random(17);
        for (int i = 0; i < 20_000; i++) {
            // few distinct numbers, so puts, replacements and removals of neighbours all happen often
            int qp = random.nextInt(300);
            if (random.nextInt(3) == 0) {
                String value = expected.get(qp);
                if (value != null) {
                    table.remove(qp, value);
                    expected.remove(qp);
                }
            }
            else {
                String value = "s" + i;
                table.put(qp, value);
                expected.put(qp, value);
            }
            if (i % 97 == 0) {
                for (int probe = 0; probe < 300; probe++) {
                    assertThat(table.get(probe)).as("qp %d after %d operations", probe, i).isEqualTo(expected.get(probe));
                }
                assertThat(table.size()).isEqualTo(expected.size());
            }
        }
    }

    @Test
    void removingLeavesANewerSessionOfTheSameNumberInPlace() {
        QueuePairTable<String> table = new QueuePairTable<>();
        table.put(7, "old");
        table.put(7, "new");
        table.remove(7, "old");
        assertThat(table.get(7)).isEqualTo("new");
        table.remove(7, "new");
        assertThat(table.get(7)).isNull();
        assertThat(table.size()).isZero();
    }
}
