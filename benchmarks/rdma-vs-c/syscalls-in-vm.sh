#!/bin/bash
# syscalls-in-vm.sh - runs INSIDE the soft-RoCE VM: the same load on the C server and on the Java
# server while `strace -c -f` counts each server's system calls (all threads), so the kernel work
# of both can be compared call by call (librpma and libibverbs enter the kernel for every CM and
# verbs command; rxe's data path too). The counts are exact; strace's times are not (tracing
# slows every call), and neither are the clients' rates under strace.
#   tools/rxe-vm/rxe-vm.sh -t 900 -w benchmarks/rdma-vs-c/target -- benchmarks/rdma-vs-c/syscalls-in-vm.sh
# (perf cannot sample processes in the TCG guest: `perf record -p` got no samples.)
#
# Environment: ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1], PROTO [hello], CONCURRENCY [1],
# OPS [200 cycles or 2000 round trips], WARMUP_HELLO [250 per client, 8 clients],
# WARMUP_PINGPONG [10000 per client, 4 clients], OUT [$BIN/syscalls].
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
PROTO=${PROTO:-hello}
CONCURRENCY=${CONCURRENCY:-1}
WARMUP_HELLO=${WARMUP_HELLO:-250}
WARMUP_PINGPONG=${WARMUP_PINGPONG:-10000}
OUT=${OUT:-$BIN/syscalls}
LOG=$(mktemp -d /tmp/perf.XXXXXX)
mkdir -p "$OUT"
if [ "$PROTO" = hello ]; then
  OPS=${OPS:-200}; load=(--cycles "$OPS")
else
  OPS=${OPS:-2000}; load=(--rounds "$OPS")
fi

"$BIN/baseline_server" "$PROTO" "$ADDR" 7304 > "$LOG/c.log" 2>&1 &
cpid=$!
# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"
start_java_server "$LOG/java.log" 7204 7206 || { echo "FAIL: the Java server did not start"; tail -n 50 "$LOG/java.log"; exit 1; }
if [ "$PROTO" = hello ]; then jport=7204; else jport=7206; fi
for target in "c 7304" "java $jport"; do
  set -- $target
  if [ "$PROTO" = hello ]; then
    "$BIN/load_client" hello "$ADDR" "$2" --cycles "$WARMUP_HELLO" --concurrency 8 > /dev/null
  else
    "$BIN/load_client" pingpong "$ADDR" "$2" --rounds "$WARMUP_PINGPONG" --concurrency 4 > /dev/null
  fi
done
for target in "c $cpid 7304" "java $java_pid $jport"; do
  set -- $target
  strace -c -f -p "$2" -o "$OUT/$1.txt" 2> "$LOG/strace-$1.err" &
  spid=$!
  sleep 3   # attached to every thread
  "$BIN/load_client" "$PROTO" "$ADDR" "$3" "${load[@]}" --concurrency "$CONCURRENCY" | sed "s/^/$1: /"
  kill -TERM $spid; wait $spid   # TERM, not INT: a background job of a script ignores SIGINT
  echo "== $1 ($OPS operations): system calls"
  cat "$OUT/$1.txt"
done
kill -TERM $java_wrapper $cpid; wait $java_wrapper; wait $cpid
rm -rf "$LOG"
