#!/bin/bash
# client-compare-in-vm.sh - runs INSIDE the soft-RoCE VM (compare.sh client starts it; any machine
# with RDMA works too, given ADDR): the Java load client (PingPongLoadClient on RpmaClient) and the C
# one (load_client pingpong) in turn against one C server (baseline_server pingpong, busy-polling as
# the starter's loop does), in alternating order, round after round.
#
# The Java client is one JVM for the whole comparison (PingPongLoadClient --commands: one run per
# line), so its JIT compiler settles before anything is measured; each of its runs builds and closes
# its own RpmaClient, as each load_client process makes its own peer and connections. Both get the
# same warm-up; then the Java client gets unmeasured rounds of the measured tests until its JIT
# compiler threads used less than JIT_QUIET_MS of CPU in one. Each round runs every test with both
# clients back to back, C first in odd rounds and Java first in even ones. Each RESULT line gets
# client=, rep=, the client process's CPU time during the run (cpu_ms=: the JVM's from
# /proc/PID/stat; load_client's from this shell's reaped children, /proc/$$/stat) and the server's
# (server_cpu_ms=). Latency percentiles are also taken over all rounds pooled (POOLED lines).
#
# Tests: "pingpong 1" request/reply, 1 connection x 1 message in flight; "rate 1" message rate,
# 1 connection x RATE1_INFLIGHT in flight; "rate RATE_CLIENTS" message rate, RATE_CLIENTS
# connections x RATE_INFLIGHT in flight (the server comparison's rate test).
#
# Environment (defaults in brackets):
#   ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1]   the address the server listens on
#   ROUNDS [10]               alternating rounds
#   RR_MESSAGES [2000]        measured round trips per round, request/reply
#   RATE1_INFLIGHT [16]       messages in flight on the one connection of "rate 1"
#   RATE1_MESSAGES [4000]     measured messages per round there
#   RATE_CLIENTS [16]         connections of the other rate test (more than 1) ...
#   RATE_INFLIGHT [8]         ... each keeping this many messages in flight
#   RATE_MESSAGES [1000]      measured messages per connection and round there
#   PINGPONG_WARMUP [200]     unmeasured messages per connection before those
#   WARMUP_MESSAGES [10000]   round trips of each client's request/reply warm-up run
#   C_WINDOW [max of the in-flight counts]  receives the server posts per connection (--window)
#   C_BUSY_POLL_US [50]       the server's --busy-poll-us (the starter's busy-poll)
#   PORT [7326]               the server's port
#   JIT_SETTLE_ROUNDS [8], JIT_QUIET_MS [100]   as in compare-in-vm.sh, for the Java client
#   CLIENT_JAR [rpma-benchmarks/target/benchmarks.jar]
#   JAVA_CLIENT_OPTS [-XX:+UseSerialGC -Xms64m -Xmx256m -XX:-UsePerfData]  the server comparison's
#   JAVA_CLIENT_OPTS_B [JAVA_CLIENT_OPTS]  the second JVM's options (CLIENT_JAR_B)
#   JAVA_B [java]             the second JVM's launcher, to compare one build on two JVMs
#                             (e.g. /usr/lib/jvm/temurin-25-jdk-amd64/bin/java)
#   JAVA_CLIENT_ARGS []       more PingPongLoadClient options for every Java run (--event-loops N,
#                             --busy-poll-us N; defaults: the client's, 1 loop without a busy poll,
#                             which looks at its queues until empty and sleeps, as load_client
#                             polls and then sleeps in poll())
#   ONLY [all]                a regular expression of the tests to run ("pingpong 1", "rate 1", "rate 16")
#   CLIENT_JAR_B []           an A/B comparison of two builds of the Java client in the same VM boot:
#                             a second JVM on this jar runs every test too (client=javab), warmed up
#                             and settled as the first; each round runs the three clients back to
#                             back, in an order that turns from round to round (compare.sh client-ab)
#   CLIENT_MAIN, CLIENT_MAIN_B [dev.rpma.benchmarks.client.PingPongLoadClient]  the JVMs' main
#                             classes: BarePingPongClient or BareLoopPingPongClient (ONLY="pingpong 1")
#                             put the floor of a JVM on the binding, alone or on the event loop,
#                             without the client, beside the C client
#   RESULTS_FILE [$BIN/client-compare-results.txt]  in the VM, in a directory shared with -w
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
ROUNDS=${ROUNDS:-10}
RR_MESSAGES=${RR_MESSAGES:-2000}
RATE1_INFLIGHT=${RATE1_INFLIGHT:-16}
RATE1_MESSAGES=${RATE1_MESSAGES:-4000}
RATE_CLIENTS=${RATE_CLIENTS:-16}
RATE_INFLIGHT=${RATE_INFLIGHT:-8}
RATE_MESSAGES=${RATE_MESSAGES:-1000}
PINGPONG_WARMUP=${PINGPONG_WARMUP:-200}
WARMUP_MESSAGES=${WARMUP_MESSAGES:-10000}
C_WINDOW=${C_WINDOW:-$(( RATE1_INFLIGHT > RATE_INFLIGHT ? RATE1_INFLIGHT : RATE_INFLIGHT ))}
C_BUSY_POLL_US=${C_BUSY_POLL_US:-50}
PORT=${PORT:-7326}
JIT_SETTLE_ROUNDS=${JIT_SETTLE_ROUNDS:-8}
JIT_QUIET_MS=${JIT_QUIET_MS:-100}
CLIENT_JAR=${CLIENT_JAR:-$ROOT/rpma-benchmarks/target/benchmarks.jar}
JAVA_CLIENT_OPTS=${JAVA_CLIENT_OPTS:--XX:+UseSerialGC -Xms64m -Xmx256m -XX:-UsePerfData}
JAVA_CLIENT_ARGS=${JAVA_CLIENT_ARGS:-}
RESULTS_FILE=${RESULTS_FILE:-$BIN/client-compare-results.txt}
HZ=$(getconf CLK_TCK)
LOG=$(mktemp -d /tmp/client-compare.XXXXXX)
failures=0

fail() { echo "FAIL $*"; failures=$((failures+1)); }
# CPU ticks of main's children that have been waited for (each load_client among them); main runs
# in a subshell of its own (main | tee), whose pid main keeps in main_pid
children_ticks() { awk '{print $16 + $17}' "/proc/$main_pid/stat"; }

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"

start() {
  "$BIN/baseline_server" pingpong "$ADDR" "$PORT" --window "$C_WINDOW" --busy-poll-us "$C_BUSY_POLL_US" \
    > "$LOG/server.log" 2>&1 &
  server_pid=$!
  wait_for_line "$LOG/server.log" listening 10 "$server_pid" || { fail "the C server did not start"; cat "$LOG/server.log"; return 1; }
  [ -s "$CLIENT_JAR" ] || { fail "no $CLIENT_JAR (mvn -pl rpma-benchmarks -am package)"; return 1; }
  # shellcheck disable=SC2086  # JAVA_CLIENT_OPTS is a word list
  coproc JAVA_CLIENT { exec java $JAVA_CLIENT_OPTS -cp "$CLIENT_JAR" "${CLIENT_MAIN:-dev.rpma.benchmarks.client.PingPongLoadClient}" \
    --commands 2> "$LOG/java-client.err"; }
  java_pid=$JAVA_CLIENT_PID
  to_java=${JAVA_CLIENT[1]}
  from_java=${JAVA_CLIENT[0]}
  echo "INFO java_pid=$java_pid java_cmd=$(tr '\0' ' ' < "/proc/$java_pid/cmdline" | cut -c1-300)"
  [ -n "${CLIENT_JAR_B:-}" ] || return 0
  [ -s "$CLIENT_JAR_B" ] || { fail "no $CLIENT_JAR_B"; return 1; }
  # bash keeps one coprocess: the second JVM talks through two named pipes
  mkfifo "$LOG/b.in" "$LOG/b.out"
  # shellcheck disable=SC2086
  "${JAVA_B:-java}" ${JAVA_CLIENT_OPTS_B:-$JAVA_CLIENT_OPTS} -cp "$CLIENT_JAR_B" "${CLIENT_MAIN_B:-dev.rpma.benchmarks.client.PingPongLoadClient}" --commands \
    < "$LOG/b.in" > "$LOG/b.out" 2> "$LOG/javab-client.err" &
  javab_pid=$!
  exec {to_javab}> "$LOG/b.in" {from_javab}< "$LOG/b.out"
  echo "INFO javab_pid=$javab_pid javab_jar=$CLIENT_JAR_B javab_main=${CLIENT_MAIN_B:-PingPongLoadClient} javab_java=${JAVA_B:-java}"
}

# run CLIENT(c|java) PROTO(pingpong|rate) CONNECTIONS REP
run() {
  local client=$1 proto=$2 conc=$3 rep=$4 args
  case $proto/$conc in
    pingpong/*) args=(--rounds "$RR_MESSAGES");;
    rate/1) args=(--rounds "$RATE1_MESSAGES" --inflight "$RATE1_INFLIGHT");;
    rate/*) args=(--rounds "$RATE_MESSAGES" --inflight "$RATE_INFLIGHT");;
  esac
  args+=(--warmup "$PINGPONG_WARMUP" --concurrency "$conc" --timeout 300)
  [ "$rep" = warmup ] || args+=(--latency-file "$LOG/lat-$client-$proto-$conc")
  # shellcheck disable=SC2086  # JAVA_CLIENT_ARGS is a word list
  [ "$client" != c ] && args+=($JAVA_CLIENT_ARGS)
  if [ "$client" = javab ]; then
    # measured_run talks to the JVM of to_java, from_java and java_pid
    to_java=$to_javab from_java=$from_javab java_pid=$javab_pid \
      measured_run "$client" pingpong "$PORT" "$proto" "$rep" "${args[@]}"
  else
    measured_run "$client" pingpong "$PORT" "$proto" "$rep" "${args[@]}"
  fi
}

stop() {
  local rc
  [ -n "${to_java:-}" ] && eval "exec $to_java>&-"   # the end of its input: the Java client exits
  if [ -n "${java_pid:-}" ]; then
    wait "$java_pid"; rc=$?
    [ "$rc" = 0 ] || fail "the Java client exited $rc"
  fi
  if [ -n "${javab_pid:-}" ]; then
    eval "exec $to_javab>&- $from_javab<&-"
    wait "$javab_pid"; rc=$?
    [ "$rc" = 0 ] || fail "the second Java client exited $rc"
  fi
  if [ -n "${server_pid:-}" ]; then
    kill -TERM "$server_pid" 2>/dev/null
    wait "$server_pid"; rc=$?
    [ "$rc" = 0 ] || fail "the C server exited $rc after SIGTERM"
    grep -h 'stopped:' "$LOG/server.log" | sed 's/^/INFO server /'
  fi
  [ -s "$LOG/java-client.err" ] && sed 's/^/INFO java client stderr: /' "$LOG/java-client.err" | head -n 5
}

TESTS=()
for test in "pingpong 1" "rate 1" "rate $RATE_CLIENTS"; do
  [[ "$test" =~ ${ONLY:-.} ]] && TESTS+=("$test")
done

main() {
  main_pid=$BASHPID
  echo "== kernel $(uname -r), $(nproc) vCPU, $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) MiB, addr $ADDR, rounds $ROUNDS"
  echo "INFO rr_messages=$RR_MESSAGES rate1_inflight=$RATE1_INFLIGHT rate1_messages=$RATE1_MESSAGES rate_clients=$RATE_CLIENTS rate_inflight=$RATE_INFLIGHT rate_messages=$RATE_MESSAGES c_window=$C_WINDOW c_busy_poll_us=$C_BUSY_POLL_US pingpong_warmup=$PINGPONG_WARMUP warmup_messages=$WARMUP_MESSAGES java_client_args=${JAVA_CLIENT_ARGS// /_}"
  if ! start; then stop; echo "== failures: $failures"; return 1; fi

  local t0=$SECONDS client test rep order clients="c java${CLIENT_JAR_B:+ javab}"
  for client in $clients; do   # the same warm-up for all (JIT for the JVM, caches for both)
    RR_MESSAGES=$WARMUP_MESSAGES run "$client" pingpong 1 warmup
    for test in "${TESTS[@]}"; do
      # shellcheck disable=SC2086
      run "$client" $test warmup
    done
  done
  settle_jit "$java_pid"
  [ -n "${CLIENT_JAR_B:-}" ] && settle_jit "$javab_pid" javab
  echo "INFO warmup_seconds=$((SECONDS - t0)) java_client_rss_kb=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$java_pid/status")"

  for rep in $(seq "$ROUNDS"); do
    if [ -n "${CLIENT_JAR_B:-}" ]; then
      # each client first, in the middle and last in turn; A right before B as often as after it
      case $((rep % 4)) in 1) order="c java javab";; 2) order="javab java c";; 3) order="c javab java";; 0) order="java javab c";; esac
    elif [ $((rep % 2)) = 1 ]; then order="c java"; else order="java c"; fi
    for test in "${TESTS[@]}"; do
      for client in $order; do
        # shellcheck disable=SC2086
        run "$client" $test "$rep"
      done
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
