#!/bin/bash
# vm-bench.sh - runs INSIDE the soft-RoCE VM (or on any machine with RDMA, given the
# addresses): for each server and topology, start the server, drive it with
# load_client, stop it with SIGTERM, and check with `rdma res show` that nothing leaked
# (per connection: counts back to the idle server's; per server: back to before).
# Normally started by run-in-vm.sh.
#
# Environment:
#   SERVERS            space-separated NAME=EXECUTABLE (default "c=$BIN/baseline_server").
#                      EXECUTABLE is run as `EXECUTABLE hello|pingpong ADDR PORT`, must
#                      print a line containing "listening" when ready and exit 0 after
#                      SIGTERM. Put the Java sample app here (a wrapper script) to compare
#                      both servers in the same VM run.
#   SERVER_START_TIMEOUT  seconds to wait for "listening" (default 5; a JVM in the VM
#                      needs far more, e.g. 180)
#   SAME_IP            default $RPMA_TEST_SAME_IP or 198.18.0.1
#   SERVER_IP          default $RPMA_TEST_SERVER_IP or 198.18.3.2
#   TOPOLOGIES ("same veth"), PROTOCOLS ("hello pingpong"), HELLO_CYCLES (50),
#   HELLO_CONCURRENCY ("1 8"), PINGPONG_ROUNDS (2000), PINGPONG_CONCURRENCY ("1 4"),
#   PINGPONG_WARMUP (0), PORT (7471),
#   REPEAT (1): repeat everything N times, the servers interleaved within each
#              repetition (the emulator is noisy: compare medians over repetitions),
#   ROBUSTNESS (1: also kill a client mid-run and stop the server under load, and check
#              the clean-up; first repetition only), RESULTS_FILE (default
#              $BIN/vm-bench-results.txt: the RESULT/LEAKCHECK/FAIL lines of this run;
#              in the VM it must lie in a directory shared with -w).
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
SERVERS=${SERVERS:-c=$BIN/baseline_server}
SERVER_START_TIMEOUT=${SERVER_START_TIMEOUT:-5}
SAME_IP=${SAME_IP:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
SERVER_IP=${SERVER_IP:-${RPMA_TEST_SERVER_IP:-198.18.3.2}}
TOPOLOGIES=${TOPOLOGIES:-same veth}
PROTOCOLS=${PROTOCOLS:-hello pingpong}
HELLO_CYCLES=${HELLO_CYCLES:-50}
HELLO_CONCURRENCY=${HELLO_CONCURRENCY:-1 8}
PINGPONG_ROUNDS=${PINGPONG_ROUNDS:-2000}
PINGPONG_CONCURRENCY=${PINGPONG_CONCURRENCY:-1 4}
PINGPONG_WARMUP=${PINGPONG_WARMUP:-0}
PORT=${PORT:-7471}
ROBUSTNESS=${ROBUSTNESS:-1}
REPEAT=${REPEAT:-1}
LOG=$(mktemp -d /tmp/vm-bench.XXXXXX)
failures=0
RESULTS_FILE=${RESULTS_FILE:-$BIN/vm-bench-results.txt}

res() { rdma res show 2>&1; }
fail() { echo "FAIL $*"; failures=$((failures+1)); }
# wait up to 5 s until `rdma res show` equals $1 (the server tears down asynchronously)
res_settles_to() {
  local want=$1 i
  for i in $(seq 50); do [ "$(res)" = "$want" ] && return 0; sleep 0.1; done
  return 1
}
# start_server NAME EXE PROTO IP PORT LOGFILE: sets spid; returns 1 if it never got ready
start_server() {
  "$2" "$3" "$4" "$5" > "$6" 2>&1 &
  spid=$!
  local i
  for i in $(seq $((SERVER_START_TIMEOUT * 20))); do
    grep -q listening "$6" && return 0
    kill -0 $spid 2>/dev/null || break
    sleep 0.05
  done
  fail "$1 $3 on $4: server did not start"; sed 's/^/  server: /' "$6"
  kill -KILL $spid 2>/dev/null; wait $spid 2>/dev/null
  return 1
}
stop_server() {   # NAME LABEL LOGFILE
  kill -TERM $spid
  wait $spid
  local src=$?
  sed "s/^/server($1,$2): /" "$3"
  [ $src = 0 ] || fail "$1 $2: server exit $src after SIGTERM"
}

main() {
echo "== kernel $(uname -r), $(nproc) vCPU, devices: $(ls /sys/class/infiniband | tr '\n' ' ')servers: $SERVERS"
res | sed 's/^/res before: /'
for rep in $(seq "$REPEAT"); do
for entry in $SERVERS; do
  name=${entry%%=*}; exe=${entry#*=}
  for topo in $TOPOLOGIES; do
    case $topo in
      same) ip=$SAME_IP;;
      veth) ip=$SERVER_IP;;
      *) echo "unknown topology $topo"; exit 2;;
    esac
    for proto in $PROTOCOLS; do
      PORT=$((PORT+1))
      before=$(res)
      slog=$LOG/server-$name-$topo-$proto.log
      start_server "$name" "$exe" "$proto" "$ip" "$PORT" "$slog" || continue
      idle=$(res)
      if [ "$proto" = hello ]; then concs=$HELLO_CONCURRENCY; else concs=$PINGPONG_CONCURRENCY; fi
      for c in $concs; do
        if [ "$proto" = hello ]; then
          args=(--cycles "$HELLO_CYCLES" --concurrency "$c")
        else
          args=(--rounds "$PINGPONG_ROUNDS" --concurrency "$c" --warmup "$PINGPONG_WARMUP")
        fi
        out=$("$BIN/load_client" "$proto" "$ip" "$PORT" "${args[@]}" --timeout 300 2>"$LOG/client.err")
        crc=$?
        echo "$out" | sed "s/^RESULT $proto /RESULT $proto server=$name topology=$topo rep=$rep /"
        [ $crc = 0 ] || { fail "$name $topo $proto c=$c: load_client exit $crc"; sed 's/^/  client: /' "$LOG/client.err"; }
        if res_settles_to "$idle"; then
          echo "LEAKCHECK $name $topo $proto c=$c: connections torn down, resources back to the idle server's: OK"
        else
          fail "$name $topo $proto c=$c: resources after the clients differ from the idle server's"
          diff <(echo "$idle") <(res)
        fi
      done
      stop_server "$name" "$topo,$proto" "$slog"
      if res_settles_to "$before"; then
        echo "LEAKCHECK $name $topo $proto: server stopped, resources back to before it started: OK"
      else
        fail "$name $topo $proto: resources after the server stopped differ from before"
        diff <(echo "$before") <(res)
      fi
    done
  done

  # robustness: a client killed mid-run, then SIGTERM to the server under load
  if [ "$ROBUSTNESS" = 1 ] && [ "$rep" = 1 ]; then
    ip=$SAME_IP; PORT=$((PORT+1))
    before=$(res)
    slog=$LOG/server-$name-robust.log
    start_server "$name" "$exe" pingpong "$ip" "$PORT" "$slog" || continue
    idle=$(res)
    "$BIN/load_client" pingpong "$ip" "$PORT" --rounds 100000000 --concurrency 2 --timeout 60 > /dev/null 2>&1 &
    cpid=$!
    sleep 2
    res | sed 's/^/res under load (2 connections): /'
    kill -KILL $cpid; wait $cpid 2>/dev/null
    if res_settles_to "$idle"; then
      echo "LEAKCHECK $name robustness: client killed (SIGKILL) mid-run, server cleaned up its connections: OK"
    else
      fail "$name robustness: after a killed client the server's resources differ from idle"; diff <(echo "$idle") <(res)
    fi
    "$BIN/load_client" pingpong "$ip" "$PORT" --rounds 100000000 --concurrency 2 --timeout 60 > "$LOG/robust-client.out" 2>&1 &
    cpid=$!
    sleep 2
    stop_server "$name" robustness "$slog"
    wait $cpid; crc=$?
    echo "robustness: load_client exit $crc after the server stopped under load (non-zero expected):"
    sed 's/^/  client: /' "$LOG/robust-client.out" | tail -n 6
    if res_settles_to "$before"; then
      echo "LEAKCHECK $name robustness: server stopped (SIGTERM) with 2 busy clients, resources back to before: OK"
    else
      fail "$name robustness: resources after SIGTERM under load differ from before"; diff <(echo "$before") <(res)
    fi
  fi
done
done

res | sed 's/^/res after: /'
echo "== failures: $failures"
[ $failures = 0 ]
}

main 2>&1 | tee "$LOG/all.txt"
rc=${PIPESTATUS[0]}
grep -E '^(RESULT|LEAKCHECK|FAIL|==)' "$LOG/all.txt" > "$RESULTS_FILE"
rm -rf "$LOG"
exit $rc
