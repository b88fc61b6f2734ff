package dev.rpma.spring.boot.autoconfigure;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.support.AbstractApplicationContext;
import org.springframework.context.support.DefaultLifecycleProcessor;

import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.spring.annotation.ProxyingPostProcessor;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.Await;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link RpmaServerLifecycle} over the scripted librpma fake: accepting starts once the context is
 * refreshed, on a non-daemon acceptor thread that owns the endpoint; stopping is asynchronous and calls
 * back once every native object is released; started and stopped events; and a proxied, meta-annotated
 * handler with a placeholder endpoint serves its endpoint.
 */
class RpmaServerLifecycleTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final ApplicationContextRunner runner = FakeRpmaServer.runnerOnDefaultPort(this.fake)
        .withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class));

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        this.fake.assertCleanAndClose();
    }

    @Test
    void acceptsOnceRefreshedOnANonDaemonOwnerThreadAndPublishesEvents() throws InterruptedException {
        Events events = new Events(this.fake);
        this.runner.withBean(Handlers.Greeter.class).withBean(Events.class, () -> events).run((context) -> {
            assertThat(context).hasNotFailed();
            RpmaServerLifecycle lifecycle = context.getBean(RpmaServerLifecycle.class);
            assertThat(lifecycle.isRunning()).isTrue();
            assertThat(lifecycle.isAutoStartup()).isTrue();
            assertThat(lifecycle.getPhase()).isEqualTo(SmartLifecycle.DEFAULT_PHASE - 1024);
            assertThat(events.received).singleElement().isInstanceOfSatisfying(RpmaServerStartedEvent.class,
                    (started) -> assertThat(started.getServer()).isSameAs(context.getBean(RpmaServer.class)));

            FakeEndpoint endpoint = this.fake.endpointAt("198.18.0.1", 7204);
            // listened while the context was refreshed, handed to the acceptor when it started
            assertThat(endpoint.listenedOnThread()).isEqualTo(Thread.currentThread().getName());
            FakeRequest request = endpoint.queueRequest("Hello server!\0".getBytes());
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(request.connectPrivateData()).isEqualTo(Handlers.HELLO_CLIENT);
            assertThat(this.fake.threadsCalling("rpma_ep_next_conn_req")).containsExactly("rpma-acceptor-default");
            assertThat(context.getBean(Handlers.Greeter.class).threads).singleElement().asString()
                .startsWith("rpma-default-handler-");

            // the acceptor is a daemon; one non-daemon thread keeps the JVM alive while the server runs
            Thread acceptor = endpoint.owner();
            assertThat(acceptor.getName()).isEqualTo("rpma-acceptor-default");
            assertThat(acceptor.isDaemon()).isTrue();
            assertThat(Thread.getAllStackTraces().keySet()).filteredOn((thread) -> thread.getName().equals("rpma-server"))
                .singleElement().satisfies((keepAlive) -> {
                    assertThat(keepAlive.isDaemon()).isFalse();
                    assertThat(keepAlive.isAlive()).isTrue();
                });
        });
        assertThat(events.received).hasSize(2).last().isInstanceOf(RpmaServerStoppedEvent.class);
        assertThat(events.liveWhenStopped).as("native objects live when RpmaServerStoppedEvent was published").isEmpty();
        FakeEndpoint endpoint = this.fake.endpointAt("198.18.0.1", 7204);
        assertThat(endpoint.shutDownOnThread()).isEqualTo("rpma-acceptor-default");
        // it runs the stop callbacks last, so it may still be finishing when the context has closed
        assertThat(ended(endpoint.owner())).isTrue();
    }

    @Test
    void stopRejectsTheRequestAHandlerHoldsAndCallsBackOnceTheHandlerReturnedAndEverythingIsReleased() {
        BlockingHandler handler = new BlockingHandler();
        this.runner.withPropertyValues("rpma.server.shutdown.grace-period=-1s")
            .withBean(BlockingHandler.class, () -> handler)
            .run((context) -> {
                FakeEndpoint endpoint = this.fake.endpointAt("198.18.0.1", 7204);
                FakeRequest request = endpoint.queueRequest(new byte[0]);
                assertThat(handler.entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

                RpmaServerLifecycle lifecycle = context.getBean(RpmaServerLifecycle.class);
                CountDownLatch stopped = new CountDownLatch(1);
                AtomicReference<String> callbackThread = new AtomicReference<>();
                AtomicReference<List<FakeLibRpma.Handle>> liveAtCallback = new AtomicReference<>();
                lifecycle.stop(() -> {
                    callbackThread.set(Thread.currentThread().getName());
                    liveAtCallback.set(this.fake.liveHandles());
                    stopped.countDown();
                });
                assertThat(lifecycle.isRunning()).isFalse();
                // the acceptor decides for the handler at once: rejected as shutdown, the endpoint shut down
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
                Await.until("the endpoint shut down", endpoint::isShutDown);
                // the handler was interrupted; it ignores that, so the stop waits for it to return
                Await.until("the handler interrupted", () -> handler.interrupted);
                assertThat(stopped.getCount()).isOne();

                handler.release.countDown();
                assertThat(stopped.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                assertThat(callbackThread.get()).isEqualTo("rpma-server-stop");
                assertThat(liveAtCallback.get()).isEmpty();
                assertThat(endpoint.shutDownOnThread()).isEqualTo("rpma-acceptor-default");
                // its late decision fails: the request was decided when the stop began
                assertThat(handler.lateDecision).hasMessageContaining("it was already rejected (shutdown)");
            });
    }

    @Test
    void failingStoppedEventListenerStillCompletesTheStop() {
        this.runner.withBean(Handlers.Greeter.class)
            .withBean(ThrowingStoppedListener.class)
            .run((context) -> {
                CountDownLatch stopped = new CountDownLatch(1);
                context.getBean(RpmaServerLifecycle.class).stop(stopped::countDown);
                assertThat(stopped.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                assertThat(context.getBean(ThrowingStoppedListener.class).calls).hasValue(1);
                assertThat(this.fake.liveHandles()).isEmpty();
            });
    }

    @Test
    void refusesToStartAgainOnceStopped() {
        this.runner.withBean(Handlers.Greeter.class).run((context) -> {
            RpmaServerLifecycle lifecycle = context.getBean(RpmaServerLifecycle.class);
            CountDownLatch stopped = new CountDownLatch(1);
            lifecycle.stop(stopped::countDown);
            assertThat(stopped.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            // its endpoints and peers are gone: running again would only pretend to accept
            assertThatIllegalStateException().isThrownBy(lifecycle::start).withMessageContaining("cannot be started again");
            assertThat(lifecycle.isRunning()).isFalse();
            assertThat(this.fake.calls("rpma_ep_listen")).isOne();
        });
    }

    @Test
    void laterLifecycleFailingReleasesTheStartedServerThroughItsOwnerThreads() {
        ListAppender<ILoggingEvent> destroyLog = capture("org.springframework.beans.factory.support");
        try {
            this.runner.withBean(Handlers.Greeter.class).withBean(FailingLifecycle.class).run((context) -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause().hasMessage("starting failed");
            });
        }
        finally {
            release(destroyLog);
        }
        // the server had started: its acceptor shut the endpoint down, not the context on its thread
        assertThat(this.fake.endpointAt("198.18.0.1", 7204).shutDownOnThread()).isEqualTo("rpma-acceptor-default");
        // no bean destruction tried to close the acceptor's endpoint or the peer under it
        assertThat(destroyLog.list).noneSatisfy((event) -> assertThat(event.getLevel().isGreaterOrEqual(Level.WARN)).isTrue());
    }

    /**
     * Spring gave up waiting for the stop (timeout-per-shutdown-phase) and destroys the beans while a
     * handler still runs: the server's destruction waits for its own stop, which ends once the handler
     * returned, with everything released by the threads that own it.
     */
    @Test
    void beansDestroyedAfterAStopTimeoutWaitForTheServersOwnStop() {
        BlockingHandler handler = new BlockingHandler();
        this.runner.withPropertyValues("rpma.server.shutdown.grace-period=-1s")
            .withBean(AbstractApplicationContext.LIFECYCLE_PROCESSOR_BEAN_NAME, DefaultLifecycleProcessor.class,
                    () -> {
                        DefaultLifecycleProcessor processor = new DefaultLifecycleProcessor();
                        processor.setTimeoutPerShutdownPhase(1);
                        return processor;
                    })
            .withBean(BlockingHandler.class, () -> handler)
            // depends on the server, so destroyed before it
            .withBean(ReleaseOnDestroy.class)
            .run((context) -> {
                this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
                assertThat(handler.entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            });
        assertThat(handler.released).as("the handler was let go before the server was destroyed").isTrue();
        assertThat(this.fake.endpointAt("198.18.0.1", 7204).shutDownOnThread()).isEqualTo("rpma-acceptor-default");
        assertThat(this.fake.liveHandles()).isEmpty();
    }

    @Test
    void proxiedMetaAnnotatedHandlerWithAPlaceholderEndpointServesItsEndpoint() {
        this.runner.withPropertyValues("my.endpoint=replica", "rpma.server.endpoints.replica.port=7205")
            .withBean(Handlers.Greeter.class)
            .withBean(ProxyingPostProcessor.class, () -> new ProxyingPostProcessor(false, ReplicaHandler.class))
            .withBean("replicaHandler", ReplicaHandler.class)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(AopUtils.isJdkDynamicProxy(context.getBean("replicaHandler"))).isTrue();
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7205).queueRequest(new byte[0]);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                assertThat(context.getBean(ProxyingPostProcessor.class).advised).containsExactly("accept");
                assertThat(ReplicaHandler.endpoints).containsExactly("replica");
            });
    }

    private static ListAppender<ILoggingEvent> capture(String loggerName) {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.setName(loggerName);
        appender.start();
        ((Logger) LoggerFactory.getLogger(loggerName)).addAppender(appender);
        return appender;
    }

    private static void release(ListAppender<ILoggingEvent> appender) {
        ((Logger) LoggerFactory.getLogger(appender.getName())).detachAppender(appender);
    }

    private static boolean ended(Thread thread) throws InterruptedException {
        thread.join(WAIT.toMillis());
        return !thread.isAlive();
    }

    /** Starts after the RDMA server and fails, so the context fails with the server already accepting. */
    static class FailingLifecycle implements SmartLifecycle {

        @Override
        public void start() {
            throw new IllegalStateException("starting failed");
        }

        @Override
        public void stop() {
        }

        @Override
        public boolean isRunning() {
            return false;
        }
    }

    /** Records the server's events and what was still live in the fake when the stopped event came. */
    static class Events implements ApplicationListener<ApplicationEvent> {

        final List<ApplicationEvent> received = new CopyOnWriteArrayList<>();

        volatile List<FakeLibRpma.Handle> liveWhenStopped;

        private final FakeLibRpma fake;

        Events(FakeLibRpma fake) {
            this.fake = fake;
        }

        @Override
        public void onApplicationEvent(ApplicationEvent event) {
            if (event instanceof RpmaServerStoppedEvent) {
                this.liveWhenStopped = this.fake.liveHandles();
            }
            if (event instanceof RpmaServerStartedEvent || event instanceof RpmaServerStoppedEvent) {
                this.received.add(event);
            }
        }
    }

    static class ThrowingStoppedListener implements ApplicationListener<RpmaServerStoppedEvent> {

        final AtomicInteger calls = new AtomicInteger();

        @Override
        public void onApplicationEvent(RpmaServerStoppedEvent event) {
            this.calls.incrementAndGet();
            throw new IllegalStateException("listener failed");
        }
    }

    /**
     * Holds its request undecided, ignoring interrupts, until the test releases it; then tries to
     * reject it.
     */
    static class BlockingHandler {

        final CountDownLatch entered = new CountDownLatch(1);

        final CountDownLatch release = new CountDownLatch(1);

        volatile boolean released;

        volatile boolean interrupted;

        volatile @Nullable RuntimeException lateDecision;

        @RpmaConnectionHandler
        public void hold(RpmaIncomingRequest request) {
            this.entered.countDown();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!this.released && System.nanoTime() < deadline) {
                try {
                    this.released = this.release.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                }
                catch (InterruptedException ex) {
                    this.interrupted = true;
                }
            }
            try {
                request.reject();
            }
            catch (RuntimeException ex) {
                this.lateDecision = ex;
            }
        }
    }

    /** Lets the blocked handler go when the context destroys it. */
    static class ReleaseOnDestroy implements DisposableBean {

        private final BlockingHandler handler;

        ReleaseOnDestroy(RpmaServer server, BlockingHandler handler) {
            this.handler = handler;
        }

        @Override
        public void destroy() {
            this.handler.release.countDown();
        }
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @RpmaConnectionHandler(endpoint = "${my.endpoint}")
    @interface OnConfiguredEndpoint {

    }

    interface ConnectionHandling {

        @OnConfiguredEndpoint
        void accept(RpmaIncomingRequest request, String endpointName);
    }

    static class ReplicaHandler implements ConnectionHandling {

        static final List<String> endpoints = new CopyOnWriteArrayList<>();

        ReplicaHandler() {
            endpoints.clear();
        }

        @Override
        public void accept(RpmaIncomingRequest request, String endpointName) {
            endpoints.add(endpointName);
            request.connect();
        }
    }
}
