#!/bin/bash
# client-perf-in-vm.sh - runs INSIDE the soft-RoCE VM: where the Java load client's time per message goes
# next to the C one's, both against `baseline_server pingpong` as in client-compare-in-vm.sh. Each client
# runs each test under `perf record` (cpu-clock samples with call graphs; the JIT's symbols from
# -XX:+DumpPerfMapAtExit), the recording enabled only for the measured run (the Java client gets its
# warm-up first, in the same JVM), and then under `strace -c -f` (attached for the measured run only)
# for exact system call counts.
# In the TCG guest perf samples user code only of a process it starts itself, so perf starts each client.
# Needs perf and strace on the host, whose root the VM mounts: apt-get install linux-perf strace.
# perf's cpu-clock sampling re-arms its event with an IPI per sample, which under TCG slowed the Java
# client several times (a p50 of 300 us instead of 55); TOOLS=asprof profiles the Java client's
# measured run with async-profiler instead (attached then, itimer signals every ASPROF_INTERVAL of CPU
# time, no kernel frames; about 20 % slower): fetch it first with async-profiler.sh on the host; the
# collapsed stacks go to client-asprof-java-TEST$TAG.collapsed, for perf-report.py.
#
#   tools/rxe-vm/rxe-vm.sh -t 1500 -w "$PWD/benchmarks/rdma-vs-c/target" -- benchmarks/rdma-vs-c/client-perf-in-vm.sh
#   benchmarks/rdma-vs-c/perf-report.py benchmarks/rdma-vs-c/target/client-perf-java-rr.txt
#
# Environment (defaults in brackets): ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1], RR_MESSAGES [20000 round
# trips, 1 connection x 1 in flight], RATE1_MESSAGES [40000, 1 connection x 16 in flight], WARMUP_MESSAGES
# [10000] per warm-up run, WARMUP_RUNS [1], FREQUENCY [2000 Hz], JAVA_CLIENT_ARGS [none; e.g.
# --busy-poll-us 50], TAG [none: a suffix for the output files], CLIENT_JAR
# [rpma-benchmarks/target/benchmarks.jar], CLIENT_MAIN [dev.rpma.benchmarks.client.PingPongLoadClient; or
# BareLoopPingPongClient, BarePingPongClient: the floors, in place of the client], PORT [7326], CLIENTS ["c java"], TOOLS ["perf strace"; or
# asprof, Java only], TESTS ["rr rate1"], ASPROF_INTERVAL [2ms].
# Output in $BIN [target]: client-perf-{c,java}-{rr,rate1}$TAG.txt (perf script: comm, tid, symbols and
# libraries of each sample), client-strace-{c,java}-{rr,rate1}$TAG.txt, client-perf$TAG.log (RESULT lines).
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
RR_MESSAGES=${RR_MESSAGES:-20000}
RATE1_MESSAGES=${RATE1_MESSAGES:-40000}
WARMUP_MESSAGES=${WARMUP_MESSAGES:-10000}
WARMUP_RUNS=${WARMUP_RUNS:-1}
FREQUENCY=${FREQUENCY:-2000}
JAVA_CLIENT_ARGS=${JAVA_CLIENT_ARGS:-}
TAG=${TAG:-}
CLIENT_JAR=${CLIENT_JAR:-$ROOT/rpma-benchmarks/target/benchmarks.jar}
CLIENT_MAIN=${CLIENT_MAIN:-dev.rpma.benchmarks.client.PingPongLoadClient}
PORT=${PORT:-7326}
CLIENTS=${CLIENTS:-c java}
TOOLS=${TOOLS:-perf strace}
TESTS=${TESTS:-rr rate1}
ASPROF_INTERVAL=${ASPROF_INTERVAL:-2ms}
ASPROF_LIB=$BIN/async-profiler/libasyncProfiler.so
JAVA_OPTS="-XX:+UseSerialGC -Xms64m -Xmx256m -XX:-UsePerfData -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer"
WORK=$(mktemp -d /tmp/client-perf.XXXXXX)
LOGFILE=$BIN/client-perf$TAG.log
rc=0
: > "$LOGFILE"
say() { echo "$*" | tee -a "$LOGFILE"; }

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"

"$BIN/baseline_server" pingpong "$ADDR" "$PORT" --window 16 --busy-poll-us 50 > "$WORK/server.log" 2>&1 &
server_pid=$!
wait_for_line "$WORK/server.log" listening 10 "$server_pid" || { say "FAIL: the C server did not start"; cat "$WORK/server.log"; exit 1; }

# test_args NAME: the load_client arguments of test rr (1 x 1) or rate1 (1 x 16)
test_args() {
  case $1 in
    rr) echo "--rounds $RR_MESSAGES --warmup 200 --concurrency 1";;
    rate1) echo "--rounds $RATE1_MESSAGES --inflight 16 --warmup 200 --concurrency 1";;
  esac
}

# wait_for_count N: until the Java client ($client) printed N RESULT lines; 1 when it ended first or
# after 10 min
wait_for_count() {
  local i
  for i in $(seq 6000); do
    [ "$(grep -c '^RESULT' "$WORK/java.out")" -ge "$1" ] && return 0
    kill -0 "$client" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# perf_script DATA OUT
perf_script() {
  perf script -i "$1" -F comm,tid,ip,sym,dso > "$2" 2> "$WORK/perf-script.err" || { cat "$WORK/perf-script.err"; rc=1; }
  say "== $(grep -c '^[^[:space:]]' "$2") samples in $2"
}

for test in $TESTS; do
  # shellcheck disable=SC2046
  set -- $(test_args "$test")
  for tool in $TOOLS; do
    [[ " $CLIENTS " == *" c "* ]] && [ "$tool" != asprof ] || continue
    say "== C client, $test, under $tool"
    if [ "$tool" = perf ]; then
      perf record -e cpu-clock -F "$FREQUENCY" -g -o "$WORK/c-$test.data" -- \
        "$BIN/load_client" pingpong "$ADDR" "$PORT" "$@" 2> "$WORK/perf-c.err" | tee -a "$LOGFILE" || rc=1
      perf_script "$WORK/c-$test.data" "$BIN/client-perf-c-$test$TAG.txt"
    else
      strace -c -f -o "$BIN/client-strace-c-$test$TAG.txt" "$BIN/load_client" pingpong "$ADDR" "$PORT" "$@" | tee -a "$LOGFILE" || rc=1
    fi
  done

  for tool in $TOOLS; do
    [[ " $CLIENTS " == *" java "* ]] || break
    say "== Java client ${CLIENT_MAIN##*.} ($JAVA_CLIENT_ARGS), $test, under $tool"
    rm -f "$WORK/ctl" "$WORK/ack" "$WORK/in"
    mkfifo "$WORK/ctl" "$WORK/ack" "$WORK/in"
    launcher=()
    [ $tool = perf ] && launcher=(perf record -e cpu-clock -F "$FREQUENCY" -g -D -1 --control "fifo:$WORK/ctl,$WORK/ack" -o "$WORK/java-$test.data" --)
    # shellcheck disable=SC2086
    "${launcher[@]}" java $JAVA_OPTS -cp "$CLIENT_JAR" "$CLIENT_MAIN" --commands \
      < "$WORK/in" > "$WORK/java.out" 2> "$WORK/java.err" &
    client=$!   # perf's pid, or the JVM's when nothing launches it
    exec 7> "$WORK/in"
    # shellcheck disable=SC2086
    for _ in $(seq "$WARMUP_RUNS"); do
      echo "pingpong $ADDR $PORT --rounds $WARMUP_MESSAGES --concurrency 1 $JAVA_CLIENT_ARGS" >&7
    done
    wait_for_count "$WARMUP_RUNS" || { say "FAIL: no warm-up result"; rc=1; }
    if [ $tool = perf ]; then
      echo enable > "$WORK/ctl" && read -r _ < "$WORK/ack"
    elif [ $tool = asprof ]; then
      [ -s "$ASPROF_LIB" ] || { say "FAIL: no $ASPROF_LIB (run async-profiler.sh on the host)"; rc=1; }
      # the agent's options in quotes: jcmd would split them at '='
      jcmd "$client" JVMTI.agent_load "$ASPROF_LIB" "\"start,event=itimer,interval=$ASPROF_INTERVAL,threads\"" \
        > "$WORK/jcmd.out" 2>&1 || { cat "$WORK/jcmd.out"; rc=1; }
    else
      # attached to every thread of the JVM for the measured run only
      strace -c -f -p "$client" -o "$BIN/client-strace-java-$test$TAG.txt" &
      tracer=$!
      sleep 3
    fi
    # shellcheck disable=SC2086
    echo "pingpong $ADDR $PORT $* $JAVA_CLIENT_ARGS" >&7
    wait_for_count $((WARMUP_RUNS + 1)) || { say "FAIL: no result"; rc=1; }
    if [ $tool = perf ]; then
      echo disable > "$WORK/ctl" && read -r _ < "$WORK/ack"
    elif [ $tool = asprof ]; then
      jcmd "$client" JVMTI.agent_load "$ASPROF_LIB" \
        "\"stop,collapsed,file=$BIN/client-asprof-java-$test$TAG.collapsed\"" > "$WORK/jcmd.out" 2>&1 \
        || { cat "$WORK/jcmd.out"; rc=1; }
      say "== $(wc -l < "$BIN/client-asprof-java-$test$TAG.collapsed") stacks in $BIN/client-asprof-java-$test$TAG.collapsed"
    else
      kill -INT "$tracer"; wait "$tracer"
    fi
    exec 7>&-
    wait "$client" || rc=1
    grep '^RESULT' "$WORK/java.out" | tee -a "$LOGFILE"
    head -n 5 "$WORK/java.err"
    [ $tool = perf ] && perf_script "$WORK/java-$test.data" "$BIN/client-perf-java-$test$TAG.txt"
  done
done
kill -TERM "$server_pid"; wait "$server_pid"
rm -rf "$WORK"
exit $rc
