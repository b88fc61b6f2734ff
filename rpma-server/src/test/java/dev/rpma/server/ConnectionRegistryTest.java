package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The places of one endpoint: the limit, and a stop that waits until every place is given back. */
@Timeout(30)
class ConnectionRegistryTest {

    private final ConnectionRegistry registry = new ConnectionRegistry(2);

    @Test
    void reservesUpToTheLimitAndAGivenBackPlaceIsFreeAgain() {
        assertThat(this.registry.reserve()).isTrue();
        assertThat(this.registry.reserve()).isTrue();
        assertThat(this.registry.reserve()).isFalse();
        this.registry.unreserve();
        assertThat(this.registry.reserve()).isTrue();
        assertThat(this.registry.reserved()).isEqualTo(2);
    }

    @Test
    void aWaitForTheEmptyRegistryEndsWhenTheLastPlaceIsGivenBack() throws Exception {
        this.registry.reserve();
        this.registry.reserve();
        CompletableFuture<Boolean> emptied = CompletableFuture.supplyAsync(() -> {
            try {
                return this.registry.awaitEmpty(TimeUnit.SECONDS.toNanos(20));
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        this.registry.unreserve();
        Thread.sleep(50);
        assertThat(emptied).isNotDone();
        this.registry.unreserve();
        // long before the 20 s of the wait: the last place given back woke it
        assertThat(emptied.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void placesTakenAndGivenBackWithNobodyWaitingLeaveAWaitThatComesLaterToFindItEmpty() throws Exception {
        for (int i = 0; i < 1000; i++) {
            this.registry.reserve();
            this.registry.unreserve();
        }
        assertThat(this.registry.awaitEmpty(0)).isTrue();
        this.registry.reserve();
        assertThat(this.registry.awaitEmpty(TimeUnit.MILLISECONDS.toNanos(20))).isFalse();
    }
}
