#!/bin/bash
# compare-in-vm.sh - runs INSIDE the soft-RoCE VM (compare.sh starts it; any machine with
# RDMA works too, given ADDR): the C baseline servers and the Java sample app side by side,
# measured in turn with the same C load client, in alternating order, round after round.
#
# All three servers run for the whole comparison: baseline_server hello (C_HELLO_PORT),
# baseline_server pingpong (C_PINGPONG_PORT), and one JVM of the sample app serving both
# (java-server.sh both; J_HELLO_PORT, J_PINGPONG_PORT). Both get the same warm-up; then the
# Java server's resident memory and heap are read. Each round runs every test against both
# servers back to back, C first in odd rounds and Java first in even ones (ABBA: a linear drift
# of the emulator's speed cancels out over two rounds). Each RESULT line gets server=, rep= and
# the server's CPU time during the run (cpu_ms=, from /proc/PID/stat).
#
# Many short rounds rather than a few long ones: the emulator's speed swings with the host's
# load within seconds, and short runs back to back see the same swings. Latency percentiles are
# taken over all rounds pooled (POOLED lines; load_client --latency-file), rates over the summed
# operations and time; the per-round figures show the spread.
#
# Environment (defaults in brackets):
#   ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1]   the address all servers listen on
#   ROUNDS [10]                 alternating rounds; the emulator's rounds are bimodal (a ping-pong p50
#                               of one server now and then half its usual), 10 let the mix even out
#   HELLO_CYCLES [200]          sequential connect/disconnect cycles per round (1 client)
#   HELLO_CYCLES_8 [15]         cycles per client and round with 8 concurrent clients
#   PINGPONG_ROUNDS [2000]      measured round trips per round, 1 client (10 rounds: 20,000)
#   PINGPONG_ROUNDS_4 [500]     measured round trips per client and round, 4 clients (20,000)
#   PINGPONG_ROUNDS_64 [60]     measured round trips per client and round, 64 clients (38,400)
#   RATE_CLIENTS [16]           the message-rate test: this many clients ...
#   RATE_INFLIGHT [8]           ... each keeping this many messages in flight (load_client --inflight)
#   RATE_MESSAGES [1000]        measured messages per client and round in the rate test (160,000)
#   C_WINDOW [8]                receives each C ping-pong server posts per connection (--window):
#                               at least RATE_INFLIGHT, as the sample app's 8 receive slots
#   PINGPONG_WARMUP [200]       unmeasured round trips per connection before those
#   WARMUP_HELLO [250]          warm-up cycles per client (8 clients) per server
#   WARMUP_PINGPONG [10000]     warm-up round trips per client (4 clients) per server
#   WARMUP_SESSIONS [5120]      short ping-pong sessions (2 round trips each, 64 at a time) through the
#                               Java server's pingpong endpoint after the warm-up: the code that runs once
#                               per session (accept, session start and end) reaches the JIT's thresholds
#                               only after thousands of sessions, and until then it compiles in the
#                               measured rounds (the C servers get none: they have no JIT)
#   JIT_SETTLE_ROUNDS [8]       after the warm-up, unmeasured rounds of the measured tests against the
#                               Java server until its JIT compiler threads used less than
#                               JIT_QUIET_MS [100] of CPU in one (at most this many): a compilation
#                               that lands in a measured round takes a vCPU from server and client
#   C_BUSY_POLL_US [50]         a third server for the ping-pong tests: baseline_server pingpong
#                               --busy-poll-us N (port C_SPIN_PORT, 7316), the algorithm of the
#                               starter's rpma.server.event-loops.busy-poll (50 us) in C; 0: none
#   ONLY [all]                  a regular expression: only the tests it matches ("hello 1", "hello 8",
#                               "pingpong 1", "pingpong 4", "pingpong 64", "rate 16"), e.g. ONLY=rate
#   RESULTS_FILE [$BIN/compare-results.txt]  RESULT/MEM/INFO/FAIL lines; in the VM it must lie
#                               in a directory shared with -w
#   JAVA_SERVER_* : see java-server.sh
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
ROUNDS=${ROUNDS:-10}
HELLO_CYCLES=${HELLO_CYCLES:-200}
HELLO_CYCLES_8=${HELLO_CYCLES_8:-15}
PINGPONG_ROUNDS=${PINGPONG_ROUNDS:-2000}
PINGPONG_ROUNDS_4=${PINGPONG_ROUNDS_4:-500}
PINGPONG_ROUNDS_64=${PINGPONG_ROUNDS_64:-60}
RATE_CLIENTS=${RATE_CLIENTS:-16}
RATE_INFLIGHT=${RATE_INFLIGHT:-8}
RATE_MESSAGES=${RATE_MESSAGES:-1000}
C_WINDOW=${C_WINDOW:-8}
PINGPONG_WARMUP=${PINGPONG_WARMUP:-200}
WARMUP_HELLO=${WARMUP_HELLO:-250}
WARMUP_PINGPONG=${WARMUP_PINGPONG:-10000}
C_HELLO_PORT=${C_HELLO_PORT:-7304}
C_PINGPONG_PORT=${C_PINGPONG_PORT:-7306}
J_HELLO_PORT=${J_HELLO_PORT:-7204}
J_PINGPONG_PORT=${J_PINGPONG_PORT:-7206}
WARMUP_SESSIONS=${WARMUP_SESSIONS:-5120}
JIT_SETTLE_ROUNDS=${JIT_SETTLE_ROUNDS:-8}
JIT_QUIET_MS=${JIT_QUIET_MS:-100}
C_BUSY_POLL_US=${C_BUSY_POLL_US:-50}
C_SPIN_PORT=${C_SPIN_PORT:-7316}
export JAVA_SERVER_HTTP_PORT=${JAVA_SERVER_HTTP_PORT:-8080}
RESULTS_FILE=${RESULTS_FILE:-$BIN/compare-results.txt}
LOG=$(mktemp -d /tmp/compare.XXXXXX)
failures=0

fail() { echo "FAIL $*"; failures=$((failures+1)); }
# client_failed WHAT: a FAIL line and the end of the load client's standard error
client_failed() { fail "$1"; sed 's/^/  client: /' "$LOG/client.err" | tail -n 20; }
# the threads that used the most CPU between two thread_ticks snapshots: "name=ms ..."
thread_delta() {
  awk -v hz="$(getconf CLK_TCK)" 'NR == FNR { before[$1] = $2; next }
       { d = $2 - before[$1]; if (d > 0) print d * 1000 / hz, $3 }' "$1" "$2" \
    | sort -rn | head -n 6 | awk '{ printf "%s%s=%d", (NR > 1 ? " " : ""), $2, $1 }'
}
rss_kb() { awk -v k="$2:" '$1==k {print $2}' "/proc/$1/status" 2>/dev/null; }
metric() {   # NAME TAG -> the value of an actuator metric, or n/a
  curl -sf --max-time 20 "http://$ADDR:$JAVA_SERVER_HTTP_PORT/actuator/metrics/$1?tag=$2" 2>/dev/null \
    | jq -r '.measurements[] | select(.statistic=="VALUE") | .value' 2>/dev/null || echo n/a
}

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"

start_servers() {
  "$BIN/baseline_server" hello "$ADDR" "$C_HELLO_PORT" > "$LOG/c-hello.log" 2>&1 &
  c_hello=$!
  "$BIN/baseline_server" pingpong "$ADDR" "$C_PINGPONG_PORT" --window "$C_WINDOW" > "$LOG/c-pingpong.log" 2>&1 &
  c_pingpong=$!
  if [ "$C_BUSY_POLL_US" -gt 0 ]; then
    "$BIN/baseline_server" pingpong "$ADDR" "$C_SPIN_PORT" --window "$C_WINDOW" --busy-poll-us "$C_BUSY_POLL_US" \
      > "$LOG/c-spin.log" 2>&1 &
    c_spin=$!
  fi
  local t0=$SECONDS
  start_java_server "$LOG/java.log" "$J_HELLO_PORT" "$J_PINGPONG_PORT" "${JAVA_SERVER_START_TIMEOUT:-300}" \
    || { fail "Java server did not start"; tail -n 80 "$LOG/java.log"; return 1; }
  wait_for_line "$LOG/c-hello.log" listening 10 "$c_hello" || { fail "C hello server did not start"; cat "$LOG/c-hello.log"; return 1; }
  wait_for_line "$LOG/c-pingpong.log" listening 10 "$c_pingpong" || { fail "C pingpong server did not start"; cat "$LOG/c-pingpong.log"; return 1; }
  if [ -n "${c_spin:-}" ]; then
    wait_for_line "$LOG/c-spin.log" listening 10 "$c_spin" || { fail "C busy-polling pingpong server did not start"; cat "$LOG/c-spin.log"; return 1; }
  fi
  echo "INFO java_start_seconds=$((SECONDS - t0)) java_pid=$java_pid java_cmd=$(tr '\0' ' ' < "/proc/$java_pid/cmdline" | cut -c1-400)"
}

# run SERVER PROTO CONCURRENCY REP: PROTO hello, pingpong (one message in flight per client) or
# rate (ping-pong with RATE_INFLIGHT messages in flight per client)
run() {
  local server=$1 proto=$2 conc=$3 rep=$4 port pid args out crc t0 t1 wire=$2
  [ "$proto" = rate ] && wire=pingpong
  case $server/$wire in
    c/hello) port=$C_HELLO_PORT; pid=$c_hello;;
    c/pingpong) port=$C_PINGPONG_PORT; pid=$c_pingpong;;
    cspin/pingpong) port=$C_SPIN_PORT; pid=$c_spin;;
    java/hello) port=$J_HELLO_PORT; pid=$java_pid;;
    java/pingpong) port=$J_PINGPONG_PORT; pid=$java_pid;;
  esac
  case $proto/$conc in
    hello/1) args=(--cycles "$HELLO_CYCLES");;
    hello/*) args=(--cycles "$HELLO_CYCLES_8");;
    pingpong/1) args=(--rounds "$PINGPONG_ROUNDS");;
    pingpong/4) args=(--rounds "$PINGPONG_ROUNDS_4");;
    pingpong/*) args=(--rounds "$PINGPONG_ROUNDS_64");;
    rate/*) args=(--rounds "$RATE_MESSAGES" --inflight "$RATE_INFLIGHT");;
  esac
  [ "$wire" = pingpong ] && args+=(--warmup "$PINGPONG_WARMUP")
  [ "$rep" = warmup ] || args+=(--latency-file "$LOG/lat-$server-$proto-$conc")
  t0=$(cpu_ticks "$pid")
  [ "$server" = java ] && thread_ticks "$pid" > "$LOG/threads.before"
  out=$("$BIN/load_client" "$wire" "$ADDR" "$port" "${args[@]}" --concurrency "$conc" --timeout 300 2>"$LOG/client.err")
  crc=$?
  t1=$(cpu_ticks "$pid")
  echo "$out" | sed "s/^RESULT $wire /RESULT $proto server=$server rep=$rep cpu_ms=$(( (t1 - t0) * 1000 / $(getconf CLK_TCK) )) /"
  if [ "$server" = java ]; then
    thread_ticks "$pid" > "$LOG/threads.after"
    echo "THREADS $proto c=$conc rep=$rep: $(thread_delta "$LOG/threads.before" "$LOG/threads.after")"
  fi
  [ $crc = 0 ] || client_failed "$server $proto c=$conc rep=$rep: load_client exit $crc"
}

# churn: WARMUP_SESSIONS short, unmeasured ping-pong sessions through the Java server, 64 at a time
churn() {
  local done=0 t0=$SECONDS jit0
  jit0=$(jit_ms "$java_pid")
  while [ "$done" -lt "$WARMUP_SESSIONS" ]; do
    "$BIN/load_client" pingpong "$ADDR" "$J_PINGPONG_PORT" --rounds 2 --warmup 0 --concurrency 64 --timeout 300 \
      > /dev/null 2>"$LOG/client.err" \
      || { client_failed "java session churn: load_client exit $?"; return 1; }
    done=$((done + 64))
  done
  echo "INFO churn sessions=$done seconds=$((SECONDS - t0)) compiler_ms=$(( $(jit_ms "$java_pid") - jit0 ))"
}

memory() {   # LABEL
  local heap heapc nonheap
  heap=$(metric jvm.memory.used area:heap)
  heapc=$(metric jvm.memory.committed area:heap)
  nonheap=$(metric jvm.memory.used area:nonheap)
  echo "MEM $1 java_rss_kb=$(rss_kb "$java_pid" VmRSS) java_hwm_kb=$(rss_kb "$java_pid" VmHWM) java_heap_used_b=${heap%.*}" \
       "java_heap_committed_b=${heapc%.*} java_nonheap_used_b=${nonheap%.*}" \
       "java_threads=$(rss_kb "$java_pid" Threads)" \
       "c_hello_rss_kb=$(rss_kb "$c_hello" VmRSS) c_pingpong_rss_kb=$(rss_kb "$c_pingpong" VmRSS)"
}

stop_servers() {
  local p rc
  for p in ${java_wrapper:-} ${c_hello:-} ${c_pingpong:-} ${c_spin:-}; do kill -TERM "$p" 2>/dev/null; done
  for p in ${java_wrapper:-} ${c_hello:-} ${c_pingpong:-} ${c_spin:-}; do
    wait "$p"; rc=$?
    [ "$rc" = 0 ] || fail "server pid $p exited $rc after SIGTERM"
  done
  grep -h 'stopped:' "$LOG"/c-*.log | sed 's/^/INFO /'
  echo "INFO java_log_lines=$(wc -l < "$LOG/java.log") java_log_errors=$(grep -c ' ERROR ' "$LOG/java.log")" \
       "java_log_warns=$(grep -c ' WARN ' "$LOG/java.log")"
  grep -E ' (ERROR|WARN) ' "$LOG/java.log" | sed -E 's/^[^ ]+ +//' | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/INFO java log: /'
  tail -n 3 "$LOG/java.log" | sed 's/^/INFO java log tail: /'
}

TESTS=()
for test in "hello 1" "hello 8" "pingpong 1" "pingpong 4" "pingpong 64" "rate $RATE_CLIENTS"; do
  [[ "$test" =~ ${ONLY:-.} ]] && TESTS+=("$test")
done

main() {
  echo "== kernel $(uname -r), $(nproc) vCPU, $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) MiB, addr $ADDR, rounds $ROUNDS"
  echo "INFO hello_cycles=$HELLO_CYCLES hello_cycles_8=$HELLO_CYCLES_8 pingpong_rounds=$PINGPONG_ROUNDS pingpong_rounds_4=$PINGPONG_ROUNDS_4 pingpong_rounds_64=$PINGPONG_ROUNDS_64 rate_clients=$RATE_CLIENTS rate_inflight=$RATE_INFLIGHT rate_messages=$RATE_MESSAGES c_window=$C_WINDOW pingpong_warmup=$PINGPONG_WARMUP warmup_hello=$WARMUP_HELLO warmup_pingpong=$WARMUP_PINGPONG"
  if ! start_servers; then stop_servers; echo "== failures: $failures"; return 1; fi

  local t0=$SECONDS server
  for server in c java; do   # the same warm-up for both (JIT for the JVM, caches for both)
    HELLO_CYCLES_8=$WARMUP_HELLO run "$server" hello 8 warmup
    PINGPONG_ROUNDS_4=$WARMUP_PINGPONG run "$server" pingpong 4 warmup
    run "$server" rate "$RATE_CLIENTS" warmup
  done
  [ -z "${c_spin:-}" ] || PINGPONG_ROUNDS_4=$WARMUP_PINGPONG run cspin pingpong 4 warmup
  [ "$WARMUP_SESSIONS" -gt 0 ] && churn
  local test
  settle_jit "$java_pid"
  echo "INFO warmup_seconds=$((SECONDS - t0))"
  memory after-warmup

  local rep order
  for rep in $(seq "$ROUNDS"); do
    if [ $((rep % 2)) = 1 ]; then order="c java"; else order="java c"; fi
    for test in "${TESTS[@]}"; do
      servers=$order
      # the busy-polling C server in the middle: each pair of neighbours stays back to back
      case "$test/${c_spin:-}" in pingpong*/?*|rate*/?*) servers="${order% *} cspin ${order#* }";; esac
      for server in $servers; do
        # shellcheck disable=SC2086
        run "$server" $test "$rep"
      done
    done
    echo "INFO round $rep done at ${SECONDS}s"
  done
  pooled "$LOG" server
  memory end
  stop_servers
  echo "== failures: $failures"
  [ $failures = 0 ]
}

main 2>&1 | tee "$LOG/all.txt"
rc=${PIPESTATUS[0]}
grep -E '^(RESULT|POOLED|MEM|INFO|THREADS|FAIL|==)' "$LOG/all.txt" > "$RESULTS_FILE"
cp "$LOG/java.log" "$BIN/compare-java.log" 2>/dev/null
rm -rf "$LOG"
exit $rc
