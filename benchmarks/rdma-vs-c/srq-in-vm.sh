#!/bin/bash
# srq-in-vm.sh - runs INSIDE the soft-RoCE VM: does a shared receive queue serve ping-pong better
# than receive slots per connection? Two servers run side by side for the whole run: "conn", with
# WINDOW receive slots posted per connection, and "srq", with one shared receive queue of SRQ_SLOTS
# slots for all connections. IMPL=c (default): two C servers (baseline_server pingpong, busy-polling
# BUSY_POLL_US after work as the starter's loops do; --srq). IMPL=java: two JVMs of the sample app
# (java-server.sh), the second with messages.shared-receive-slots on its ping-pong endpoint. The same C load client drives both, in alternating
# order per round (conn first in odd rounds): one, 4 and 64 ping-pong clients, and RATE_CLIENTS
# clients keeping WINDOW messages each in flight. Per run: p50/p99, the message rate and the
# server's CPU time per message (from /proc/PID/stat). Results: RESULT lines in
# $HERE/target/srq-results.txt; srq-summarize.sh turns them into the table of docs/performance.md.
#
# Environment (defaults in brackets): IMPL [c], ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1], ROUNDS [5],
# WINDOW [8], SRQ_SLOTS [512], BUSY_POLL_US [50], PINGPONG_ROUNDS [2000], PINGPONG_ROUNDS_4 [500],
# PINGPONG_ROUNDS_64 [60], RATE_CLIENTS [16], RATE_MESSAGES [1000], PINGPONG_WARMUP [200].
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
ROUNDS=${ROUNDS:-5}
WINDOW=${WINDOW:-8}
SRQ_SLOTS=${SRQ_SLOTS:-512}
BUSY_POLL_US=${BUSY_POLL_US:-50}
PINGPONG_ROUNDS=${PINGPONG_ROUNDS:-2000}
PINGPONG_ROUNDS_4=${PINGPONG_ROUNDS_4:-500}
PINGPONG_ROUNDS_64=${PINGPONG_ROUNDS_64:-60}
RATE_CLIENTS=${RATE_CLIENTS:-16}
RATE_MESSAGES=${RATE_MESSAGES:-1000}
PINGPONG_WARMUP=${PINGPONG_WARMUP:-200}
CONN_PORT=7306
SRQ_PORT=7316
IMPL=${IMPL:-c}
OUT=$HERE/target/srq-results-$IMPL.txt
LOG=$(mktemp -d /tmp/srq.XXXXXX)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"

if [ "$IMPL" = java ]; then
  # the busy poll is the starter's (rpma.server.event-loops.busy-poll, 50 us by default)
  slots=--rpma.server.endpoints.pingpong.messages.receive-slots=$WINDOW
  JAVA_SERVER_HTTP_PORT=8080 JAVA_SERVER_ARGS="$slots" \
    start_java_server "$LOG/conn.log" $((CONN_PORT - 2)) "$CONN_PORT" || { cat "$LOG/conn.log"; echo "FAIL: conn server"; exit 1; }
  conn_stop=$java_wrapper conn_pid=$java_pid
  JAVA_SERVER_HTTP_PORT=8081 \
    JAVA_SERVER_ARGS="$slots --rpma.server.endpoints.pingpong.messages.shared-receive-slots=$SRQ_SLOTS" \
    start_java_server "$LOG/srq.log" $((SRQ_PORT - 2)) "$SRQ_PORT" || { cat "$LOG/srq.log"; echo "FAIL: srq server"; exit 1; }
  srq_stop=$java_wrapper srq_pid=$java_pid
else
  "$BIN/baseline_server" pingpong "$ADDR" "$CONN_PORT" --window "$WINDOW" --busy-poll-us "$BUSY_POLL_US" \
    > "$LOG/conn.log" 2>&1 &
  conn_pid=$! conn_stop=$!
  "$BIN/baseline_server" pingpong "$ADDR" "$SRQ_PORT" --window "$WINDOW" --busy-poll-us "$BUSY_POLL_US" \
    --srq "$SRQ_SLOTS" > "$LOG/srq.log" 2>&1 &
  srq_pid=$! srq_stop=$!
  wait_for_line "$LOG/conn.log" listening 10 "$conn_pid" || { cat "$LOG/conn.log"; echo "FAIL: conn server"; exit 1; }
  wait_for_line "$LOG/srq.log" listening 10 "$srq_pid" || { cat "$LOG/srq.log"; echo "FAIL: srq server"; exit 1; }
fi
trap 'kill $conn_stop $srq_stop 2>/dev/null' EXIT

# run SERVER TEST CONCURRENCY REP
run() {
  local server=$1 test=$2 conc=$3 rep=$4 port pid args out t0 t1
  if [ "$server" = conn ]; then port=$CONN_PORT; pid=$conn_pid; else port=$SRQ_PORT; pid=$srq_pid; fi
  case $test/$conc in
    pingpong/1) args=(--rounds "$PINGPONG_ROUNDS");;
    pingpong/4) args=(--rounds "$PINGPONG_ROUNDS_4");;
    pingpong/*) args=(--rounds "$PINGPONG_ROUNDS_64");;
    rate/*) args=(--rounds "$RATE_MESSAGES" --inflight "$WINDOW");;
  esac
  t0=$(cpu_ticks "$pid")
  out=$("$BIN/load_client" pingpong "$ADDR" "$port" "${args[@]}" --warmup "$PINGPONG_WARMUP" \
        --concurrency "$conc" --timeout 300 2>"$LOG/client.err") || { fail "$server $test/$conc rep $rep"; tail -n 5 "$LOG/client.err"; }
  t1=$(cpu_ticks "$pid")
  echo "$out" | sed "s/^RESULT pingpong /RESULT $test server=$server rep=$rep cpu_ms=$(( (t1 - t0) * 1000 / $(getconf CLK_TCK) )) /"
}

TESTS=("pingpong 1" "pingpong 4" "pingpong 64" "rate $RATE_CLIENTS")
{
  echo "INFO $IMPL servers, $(uname -r), $(nproc) vCPU, addr $ADDR, window $WINDOW, srq slots $SRQ_SLOTS, busy-poll $BUSY_POLL_US us, rounds $ROUNDS"
  for t in "${TESTS[@]}"; do run conn $t warmup; run srq $t warmup; done > /dev/null
  for rep in $(seq "$ROUNDS"); do
    if [ $((rep % 2)) = 1 ]; then order="conn srq"; else order="srq conn"; fi
    for t in "${TESTS[@]}"; do
      for s in $order; do run "$s" $t "$rep"; done
    done
  done
} | tee "$OUT"
kill -TERM "$conn_stop" "$srq_stop"
wait "$conn_stop" || fail "conn server exit $?"
wait "$srq_stop" || fail "srq server exit $?"
grep -h 'stopped:' "$LOG"/*.log | sed 's/^/INFO /' | tee -a "$OUT"
[ "$failures" = 0 ] || { echo "srq-in-vm: $failures failure(s)" | tee -a "$OUT"; exit 1; }
