#!/bin/bash
# perf-in-vm.sh - runs INSIDE the soft-RoCE VM: the sample app under `perf record` (cpu-clock
# samples with call graphs, the JIT's symbols from -XX:+DumpPerfMapAtExit) while the C load client
# runs ping-pong (or hello), to see where the Java server's CPU per round trip (per connection) goes,
# thread by thread and library by library.
# In the TCG guest perf samples user code only of a process it starts itself (-p and -a get none),
# so perf starts the JVM (java-server.sh's JAVA_SERVER_LAUNCHER) and records only the measured part
# (--control: enabled after the warm-up, disabled before the stop).
#
#   tools/rxe-vm/rxe-vm.sh -t 900 -w "$PWD/benchmarks/rdma-vs-c/target" -- benchmarks/rdma-vs-c/perf-in-vm.sh
#   benchmarks/rdma-vs-c/perf-report.py benchmarks/rdma-vs-c/target/perf-script.txt
#
# Environment (defaults in brackets): ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1], PROTO [pingpong; or
# hello], CONCURRENCY [4 for pingpong, 1 for hello], ROUNDS [5000 round trips or 400 cycles per
# client], WARMUP_PINGPONG [10000 per client, 4 clients], WARMUP_HELLO [250 per client, 8 clients],
# FREQUENCY [2000 Hz], INFLIGHT [1: messages each ping-pong client keeps in flight], TAG [none: a
# suffix for the output files], METRICS [none: actuator meters printed after the measured part],
# JAVA_SERVER_OPTS [java-server.sh's default; what perf needs is
# added], JAVA_SERVER_ARGS [none: e.g. --rpma.server.endpoints.pingpong.messages.shared-receive-slots=512].
# Output in $BIN [target]: perf-script$TAG.txt (perf script: comm, tid, symbols and libraries of each
# sample) and perf-client$TAG.txt.
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
PROTO=${PROTO:-pingpong}
WARMUP_PINGPONG=${WARMUP_PINGPONG:-10000}
WARMUP_HELLO=${WARMUP_HELLO:-250}
if [ "$PROTO" = hello ]; then
  CONCURRENCY=${CONCURRENCY:-1}; ROUNDS=${ROUNDS:-400}; port=7204
  measured=(--cycles "$ROUNDS"); warmup=(--cycles "$WARMUP_HELLO" --concurrency 8)
else
  CONCURRENCY=${CONCURRENCY:-4}; ROUNDS=${ROUNDS:-5000}; port=7206
  measured=(--rounds "$ROUNDS" --inflight "${INFLIGHT:-1}"); warmup=(--rounds "$WARMUP_PINGPONG" --concurrency 4)
fi
FREQUENCY=${FREQUENCY:-2000}
WORK=$(mktemp -d /tmp/perf.XXXXXX)
mkfifo "$WORK/ctl" "$WORK/ack"
export JAVA_SERVER_EXTRA_OPTS="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer"
export JAVA_SERVER_LAUNCHER="perf record -e cpu-clock -F $FREQUENCY -g -D -1 --control fifo:$WORK/ctl,$WORK/ack -o $WORK/perf.data --"
rc=0

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"
start_java_server "$WORK/java.log" 7204 7206 || { echo "FAIL: the Java server did not start"; tail -n 50 "$WORK/java.log"; exit 1; }
jvm=$(pgrep -P "$java_pid" java)
echo "== perf pid $java_pid, JVM pid $jvm"
"$BIN/load_client" "$PROTO" "$ADDR" "$port" "${warmup[@]}" > /dev/null || rc=1
echo enable > "$WORK/ctl" && read -r _ < "$WORK/ack"
"$BIN/load_client" "$PROTO" "$ADDR" "$port" "${measured[@]}" --concurrency "$CONCURRENCY" | tee "$BIN/perf-client${TAG:-}.txt" || rc=1
echo disable > "$WORK/ctl" && read -r _ < "$WORK/ack"
for metric in ${METRICS:-}; do
  echo "== $metric: $(curl -s "http://$ADDR:${JAVA_SERVER_HTTP_PORT:-8080}/actuator/metrics/$metric")"
done
# the JVM writes its symbol map when it exits; perf then finishes the recording
kill -TERM "$jvm"
wait "$java_wrapper" || rc=1
out=$BIN/perf-script${TAG:-}.txt
perf script -i "$WORK/perf.data" -F comm,tid,ip,sym,dso > "$out" 2> "$WORK/perf-script.err" || { cat "$WORK/perf-script.err"; rc=1; }
echo "== $(grep -c '^[^[:space:]]' "$out") samples in $out"
exit $rc
