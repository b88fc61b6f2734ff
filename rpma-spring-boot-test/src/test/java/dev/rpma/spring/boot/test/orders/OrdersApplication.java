package dev.rpma.spring.boot.test.orders;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The application of the README's testing example. */
@SpringBootApplication
public class OrdersApplication {

}
