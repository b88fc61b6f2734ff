#!/bin/bash
# write-compare-in-vm.sh - runs INSIDE the soft-RoCE VM (compare.sh write starts it; any machine with
# RDMA works too, given ADDR): the bandwidth of writes plus flushes into a server's region, the Java
# load client (WriteLoadClient on RpmaClient) against the C one (load_client write), in turn, against
# one server: the sample app's `flush` endpoint (librpma's example 05: the accept carries the region's
# and the peer configuration's descriptors), its region `persistent` a file of REGION_SIZE in the
# VM's memory.
#
# As client-compare-in-vm.sh: the Java client is one JVM for the whole comparison (--commands), both
# clients get the same warm-up, then the Java client gets unmeasured rounds until its JIT compiler
# threads are quiet; each round runs every size with both clients back to back, C first in odd
# rounds and Java first in even ones. Each RESULT line is renamed "RESULT wSIZE" (one test per size)
# and gets client=, rep=, the client process's CPU time (cpu_ms=) and the server's (server_cpu_ms=).
#
# Environment (defaults in brackets):
#   ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1]   the address the server listens on
#   ROUNDS [6]                alternating rounds
#   SIZES [4096 65536 1048576]   bytes per write
#   OPS_4096 [2000], OPS_65536 [500], OPS_1048576 [60]   measured write+flush operations per round
#   WARMUP [20]               unmeasured operations per connection before those
#   CONCURRENCY [1]           connections ...
#   INFLIGHT [4]              ... each keeping this many write+flush operations in flight
#   REGION_SIZE [8MB]         the server's region
#   JIT_SETTLE_ROUNDS [8], JIT_QUIET_MS [100]   as in compare-in-vm.sh, for the Java client
#   CLIENT_JAR [rpma-benchmarks/target/benchmarks.jar]
#   JAVA_CLIENT_OPTS [-XX:+UseSerialGC -Xms64m -Xmx256m -XX:-UsePerfData]
#   JAVA_CLIENT_ARGS []       more WriteLoadClient options for every Java run
#   RESULTS_FILE [$BIN/write-compare-results.txt]  in the VM, in a directory shared with -w
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
ROUNDS=${ROUNDS:-6}
SIZES=${SIZES:-4096 65536 1048576}
WARMUP=${WARMUP:-20}
CONCURRENCY=${CONCURRENCY:-1}
INFLIGHT=${INFLIGHT:-4}
REGION_SIZE=${REGION_SIZE:-8MB}
FLUSH_PORT=7208
JIT_SETTLE_ROUNDS=${JIT_SETTLE_ROUNDS:-8}
JIT_QUIET_MS=${JIT_QUIET_MS:-100}
CLIENT_JAR=${CLIENT_JAR:-$ROOT/rpma-benchmarks/target/benchmarks.jar}
JAVA_CLIENT_OPTS=${JAVA_CLIENT_OPTS:--XX:+UseSerialGC -Xms64m -Xmx256m -XX:-UsePerfData}
JAVA_CLIENT_ARGS=${JAVA_CLIENT_ARGS:-}
RESULTS_FILE=${RESULTS_FILE:-$BIN/write-compare-results.txt}
HZ=$(getconf CLK_TCK)
LOG=$(mktemp -d /tmp/write-compare.XXXXXX)
failures=0

fail() { echo "FAIL $*"; failures=$((failures+1)); }
# CPU ticks of main's waited-for children (each load_client among them), as client-compare-in-vm.sh
children_ticks() { awk '{print $16 + $17}' "/proc/$main_pid/stat"; }
ops_for() { local v="OPS_$1"; case $1 in 4096) echo "${!v:-2000}";; 65536) echo "${!v:-500}";; 1048576) echo "${!v:-60}";; *) echo "${!v:-100}";; esac; }

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"

start() {
  [ -s "$CLIENT_JAR" ] || { fail "no $CLIENT_JAR (mvn -pl rpma-benchmarks -am package)"; return 1; }
  JAVA_SERVER_ARGS="--rpma.server.regions.persistent.size=$REGION_SIZE --rpma.server.regions.persistent.path=$LOG/persistent.region --logging.level.root=WARN" \
    start_java_server "$LOG/server.log" 7311 7312 || { fail "the sample app did not start"; tail -n 30 "$LOG/server.log"; return 1; }
  server_pid=$java_pid
  # shellcheck disable=SC2086  # JAVA_CLIENT_OPTS is a word list
  coproc JAVA_CLIENT { exec java $JAVA_CLIENT_OPTS -cp "$CLIENT_JAR" dev.rpma.benchmarks.client.WriteLoadClient \
    --commands 2> "$LOG/java-client.err"; }
  java_pid=$JAVA_CLIENT_PID
  to_java=${JAVA_CLIENT[1]}
  from_java=${JAVA_CLIENT[0]}
}

# run CLIENT(c|java) SIZE REP
run() {
  local client=$1 size=$2 rep=$3 args
  args=(--size "$size" --rounds "$(ops_for "$size")" --warmup "$WARMUP" --concurrency "$CONCURRENCY"
        --inflight "$INFLIGHT" --timeout 300)
  [ "$rep" = warmup ] || args+=(--latency-file "$LOG/lat-$client-w$size-$CONCURRENCY")
  # shellcheck disable=SC2086  # JAVA_CLIENT_ARGS is a word list
  [ "$client" = java ] && args+=($JAVA_CLIENT_ARGS)
  measured_run "$client" write "$FLUSH_PORT" "w$size" "$rep" "${args[@]}"
}

stop() {
  local rc
  [ -n "${to_java:-}" ] && eval "exec $to_java>&-"   # the end of its input: the Java client exits
  if [ -n "${java_pid:-}" ] && [ "${java_pid}" != "${server_pid:-}" ]; then
    wait "$java_pid"; rc=$?
    [ "$rc" = 0 ] || fail "the Java client exited $rc"
  fi
  if [ -n "${java_wrapper:-}" ]; then
    kill -TERM "$java_wrapper" 2>/dev/null
    wait "$java_wrapper"; rc=$?
    [ "$rc" = 0 ] || fail "the sample app exited $rc after SIGTERM"
  fi
  [ -s "$LOG/java-client.err" ] && sed 's/^/INFO java client stderr: /' "$LOG/java-client.err" | head -n 5
}

TESTS=()
for size in $SIZES; do TESTS+=("$size"); done

main() {
  main_pid=$BASHPID
  echo "== kernel $(uname -r), $(nproc) vCPU, $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) MiB, addr $ADDR, rounds $ROUNDS"
  # the shared summarizer counts warm-up operations per connection under this name
  echo "INFO pingpong_warmup=$WARMUP sizes=${SIZES// /,} concurrency=$CONCURRENCY inflight=$INFLIGHT region=$REGION_SIZE java_client_args=${JAVA_CLIENT_ARGS// /_}"
  if ! start; then stop; echo "== failures: $failures"; return 1; fi

  local t0=$SECONDS client size rep order
  for client in c java; do
    for size in "${TESTS[@]}"; do run "$client" "$size" warmup; done
  done
  settle_jit "$java_pid"
  echo "INFO warmup_seconds=$((SECONDS - t0))"

  for rep in $(seq "$ROUNDS"); do
    if [ $((rep % 2)) = 1 ]; then order="c java"; else order="java c"; fi
    for size in "${TESTS[@]}"; do
      for client in $order; do run "$client" "$size" "$rep"; done
    done
    echo "INFO round $rep done at ${SECONDS}s"
  done
  pooled "$LOG" client
  stop
  echo "== failures: $failures"
  [ $failures = 0 ]
}

main 2>&1 | tee "$LOG/all.txt"
rc=${PIPESTATUS[0]}
grep -E '^(RESULT|POOLED|INFO|FAIL|==)' "$LOG/all.txt" > "$RESULTS_FILE"
rm -rf "$LOG"
exit $rc
