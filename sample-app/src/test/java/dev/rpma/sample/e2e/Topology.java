package dev.rpma.sample.e2e;

/**
 * The two topologies of the soft-RoCE VM, for the test classes that run once per topology as
 * parameterized classes (see {@link E2eEnvironment} for the addresses).
 */
enum Topology {

    /** Server and client on one address ({@code rxe0}, 198.18.0.1 in the VM). */
    SAME_IP("same-ip", E2eEnvironment.SAME_IP),

    /** The server on one end of the veth pair (198.18.3.2), the client on the other: as between two hosts. */
    VETH("veth", E2eEnvironment.SERVER_IP);

    private final String label;

    private final String serverVariable;

    Topology(String label, String serverVariable) {
        this.label = label;
        this.serverVariable = serverVariable;
    }

    /** The address servers listen on and clients connect to. */
    String serverAddress() {
        return E2eEnvironment.address(this.serverVariable);
    }

    @Override
    public String toString() {
        return this.label;
    }
}
