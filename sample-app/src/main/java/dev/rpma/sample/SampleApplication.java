package dev.rpma.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

import dev.rpma.sampleclient.SampleClientCommand;

/**
 * Serves librpma's example protocols over RDMA: 01-connection on the default endpoint,
 * 02-read-to-volatile on {@code read}, 08-messages-ping-pong on {@code pingpong}, with the
 * starter's metrics, health and {@code rpma} endpoint under {@code /actuator}; and the starter's own
 * framed protocol on {@code echo} ({@link EchoHandler}).
 *
 * <p>With {@code --client=hello|read|pingpong} the same jar is the client instead (no Spring
 * context): see {@link SampleClientCommand}.
 */
@SpringBootApplication
public class SampleApplication {

    public static void main(String[] args) {
        if (SampleClientCommand.isClientInvocation(args)) {
            System.exit(SampleClientCommand.run(args, System.out, System.err));
        }
        SpringApplication.run(SampleApplication.class, args);
    }
}
