#!/bin/bash
# bench.sh - build and run the benchmarks of docs/benchmarks.md, one command each.
#
#   rpma-benchmarks/bench.sh binding    [--rounds N] [JMH options] [regex]   typed API vs raw JNA call, on this machine
#   rpma-benchmarks/bench.sh binding-vm [--rounds N] [JMH options]           the same over a real RDMA connection:
#                                                                           CQ poll and rpma_write (soft-RoCE VM,
#                                                                           or this machine if it has a device)
#   rpma-benchmarks/bench.sh dispatch   [DispatchBenchmark options]          the starter's dispatch path vs bare loops
#   rpma-benchmarks/bench.sh datapath   [MessageLoopBenchmark options]       the event loop's bytes and CPU per message
#   rpma-benchmarks/bench.sh client-datapath [ClientLoopBenchmark options]   the client's event loop: bytes and CPU per request
#   rpma-benchmarks/bench.sh loopback   [LoopbackMessageRate options]        round trips per second over the in-JVM
#                                                                           loopback (@RpmaTest), client to server
#
# Each builds rpma-benchmarks/target/benchmarks.jar first (skip with BENCH_NO_BUILD=1) and prints
# the numbers and the typed/raw or starter/bare ratios of that one run; the output is also saved in
# rpma-benchmarks/target/bench-<command>.txt.
# Environment: BENCH_ADDRESS  IP of the RDMA device for binding-vm when run directly on a machine
#                             that has one (default 198.18.0.1, the VM's rxe0)
#              BENCH_VM_TIMEOUT  seconds for the VM run (default 1500)
set -euo pipefail

HERE=$(dirname "$(realpath "$0")")
ROOT=$(dirname "$HERE")
JAR=$HERE/target/benchmarks.jar
COMMAND=${1:-}
[ $# -gt 0 ] && shift

build() {
  if [ "${BENCH_NO_BUILD:-0}" != 1 ] || [ ! -s "$JAR" ]; then
    # -am: rpma-jna-testing (the scripted fake) and the starter come from this checkout
    (cd "$ROOT" && mvn -B -q -pl rpma-benchmarks -am package -DskipTests)
  fi
}

case "$COMMAND" in
  binding)
    build
    { java -cp "$JAR" dev.rpma.benchmarks.BindingBenchmarks "$@" \
        && java -cp "$JAR" dev.rpma.benchmarks.binding.BindingCheck; } 2>&1 | tee "$HERE/target/bench-binding.txt"
    ;;
  binding-vm)
    build
    if "$ROOT/tools/rxe-vm/has-rdma-device.sh"; then
      ADDRESS=${BENCH_ADDRESS:-198.18.0.1}
      { java -cp "$JAR" dev.rpma.benchmarks.BindingBenchmarks LoopbackBenchmark -p "address=$ADDRESS" "$@" \
          && java -cp "$JAR" dev.rpma.benchmarks.binding.BindingCheck --rdma "$ADDRESS"; } \
        2>&1 | tee "$HERE/target/bench-binding-vm.txt"
    else
      # the VM sees this machine's / read-only; the jar is copied so that a rebuild cannot change it mid-run
      RUN=$(mktemp -d /tmp/rpma-bench.XXXXXX)
      trap 'rm -rf "$RUN"' EXIT
      cp "$JAR" "$RUN/benchmarks.jar"
      # one VM boot for both programs
      "$ROOT/tools/rxe-vm/rxe-vm.sh" -t "${BENCH_VM_TIMEOUT:-1500}" -w "$RUN" -- bash -c \
        'java -cp "$0" dev.rpma.benchmarks.BindingBenchmarks LoopbackBenchmark "$@" \
           && java -cp "$0" dev.rpma.benchmarks.binding.BindingCheck --rdma 198.18.0.1' "$RUN/benchmarks.jar" "$@" \
        2>&1 | tee "$HERE/target/bench-binding-vm.txt"
    fi
    ;;
  dispatch)
    build
    # a fixed, pre-touched heap: otherwise the first touch of new heap pages (page faults zeroing
    # memory) lands on whichever thread allocates, a quarter of the acceptor's time in a short run
    java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp "$JAR" dev.rpma.benchmarks.dispatch.DispatchBenchmark "$@" \
      2>&1 | tee "$HERE/target/bench-dispatch.txt"
    ;;
  datapath)
    build
    java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp "$JAR" dev.rpma.benchmarks.datapath.MessageLoopBenchmark "$@" \
      2>&1 | tee "$HERE/target/bench-datapath.txt"
    ;;
  client-datapath)
    build
    java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp "$JAR" dev.rpma.benchmarks.datapath.ClientLoopBenchmark "$@" \
      2>&1 | tee "$HERE/target/bench-client-datapath.txt"
    ;;
  loopback)
    build
    java -cp "$JAR" dev.rpma.benchmarks.loopback.LoopbackMessageRate "$@" 2>&1 | tee "$HERE/target/bench-loopback.txt"
    ;;
  *)
    sed -n '2,19p' "$0" >&2
    exit 2
    ;;
esac
