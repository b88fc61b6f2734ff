#!/bin/bash
# ab-in-vm.sh - runs INSIDE the soft-RoCE VM: two builds of the sample app (jars A and B) side by
# side, each serving ping-pong (or hello, PROTO=hello) to the same C load client, in alternating
# order (A B, B A, ...), to see what one change to the Java server buys: the server's CPU time per
# round trip or connection (from /proc/PID/stat), the rate, and the p50 / p99, per round and pooled.
# Between two boots of the emulator these figures move by a third; within one they compare.
#
#   tools/rxe-vm/rxe-vm.sh -t 1500 -w "$PWD/benchmarks/rdma-vs-c/target" -- \
#     env JAR_A=/path/before.jar JAR_B=/path/after.jar benchmarks/rdma-vs-c/ab-in-vm.sh
#
# Both JVMs run for the whole comparison (java-server.sh, its JVM options); each gets the same
# warm-up first. Run it twice with JAR_A and JAR_B swapped: the server started first, A, can be
# favoured by more than the change being measured. Environment (defaults in brackets): JAR_A, JAR_B (required), ADDR
# [$RPMA_TEST_SAME_IP or 198.18.0.1], PROTO [pingpong], ROUNDS [8], CONCURRENCY [4 for ping-pong,
# 1 for hello], PINGPONG_ROUNDS [500 per client and round], WARMUP_PINGPONG [10000 per client],
# HELLO_CYCLES [200 per client and round], WARMUP_HELLO [250 per client, 8 clients], INFLIGHT [1:
# messages each ping-pong client keeps in flight], OPTS_A and OPTS_B [none: JVM options of server A
# or B alone], ARGS_A and ARGS_B [none: application arguments of A or B alone, e.g.
# ARGS_B=--rpma.server.acceptor.on-event-loop=false compares one jar with a property off]. Output:
# RESULT lines of load_client with server=A|B, rep= and cpu_ms=, then a summary.
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
PROTO=${PROTO:-pingpong}
ROUNDS=${ROUNDS:-8}
if [ "$PROTO" = hello ]; then CONCURRENCY=${CONCURRENCY:-1}; else CONCURRENCY=${CONCURRENCY:-4}; fi
PINGPONG_ROUNDS=${PINGPONG_ROUNDS:-500}
WARMUP_PINGPONG=${WARMUP_PINGPONG:-10000}
HELLO_CYCLES=${HELLO_CYCLES:-200}
WARMUP_HELLO=${WARMUP_HELLO:-250}
: "${JAR_A:?JAR_A: the first sample-app jar}" "${JAR_B:?JAR_B: the second sample-app jar}"
LOG=$(mktemp -d /tmp/ab.XXXXXX)
RESULTS=$LOG/results.txt

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"
# the port of server A or B for PROTO
port_of() {
  local base=7206
  if [ "$PROTO" = hello ]; then base=7204; fi
  if [ "$1" = A ]; then echo "$base"; else echo $((base + 10)); fi
}
# load_client's arguments for one measured round, and for the warm-up
if [ "$PROTO" = hello ]; then
  measured=(--cycles "$HELLO_CYCLES"); warmup=(--cycles "$WARMUP_HELLO" --concurrency 8)
else
  measured=(--rounds "$PINGPONG_ROUNDS" --warmup 200 --inflight "${INFLIGHT:-1}"); warmup=(--rounds "$WARMUP_PINGPONG" --concurrency 4)
fi

SAMPLE_JAR=$JAR_A JAVA_SERVER_EXTRA_OPTS=${OPTS_A:-} JAVA_SERVER_ARGS=${ARGS_A:-} JAVA_SERVER_HTTP_PORT=8080 start_java_server "$LOG/a.log" 7204 7206 \
  || { echo "FAIL: server A did not start"; tail -n 40 "$LOG/a.log"; exit 1; }
pid_a=$java_pid
SAMPLE_JAR=$JAR_B JAVA_SERVER_EXTRA_OPTS=${OPTS_B:-} JAVA_SERVER_ARGS=${ARGS_B:-} JAVA_SERVER_HTTP_PORT=8081 start_java_server "$LOG/b.log" 7214 7216 \
  || { echo "FAIL: server B did not start"; tail -n 40 "$LOG/b.log"; exit 1; }
pid_b=$java_pid
trap 'kill $pid_a $pid_b 2>/dev/null; wait' EXIT

# run A|B REP
run() {
  local pid t0 t1 out
  if [ "$1" = A ]; then pid=$pid_a; else pid=$pid_b; fi
  t0=$(cpu_ticks "$pid")
  out=$("$BIN/load_client" "$PROTO" "$ADDR" "$(port_of "$1")" "${measured[@]}" \
    --concurrency "$CONCURRENCY" --timeout 300 --latency-file "$LOG/lat-$1") || { echo "FAIL: $1 rep $2"; return 1; }
  t1=$(cpu_ticks "$pid")
  echo "$out" | sed "s/^RESULT $PROTO /RESULT $PROTO server=$1 rep=$2 cpu_ms=$(( (t1 - t0) * 1000 / $(getconf CLK_TCK) )) /" \
    | tee -a "$RESULTS"
}

for server in A B; do
  "$BIN/load_client" "$PROTO" "$ADDR" "$(port_of $server)" "${warmup[@]}" --timeout 600 > /dev/null \
    || { echo "FAIL: warm-up of $server"; exit 1; }
done
for rep in $(seq "$ROUNDS"); do
  if [ $((rep % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for server in $order; do run "$server" "$rep" || exit 1; done
done

# cpu per operation, rate and p50 per round; pooled percentiles from the latency files
python3 - "$RESULTS" "$LOG" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv)
    ops = int(f.get("rounds") or f["cycles"])
    p50 = float(f["p50_us"]) if "p50_us" in f else float(f["p50_ms"]) * 1000
    rows.setdefault(f["server"], []).append((int(f["rep"]), float(f["cpu_ms"]) * 1000 / ops, p50, float(f["rate"])))
what = "round trip" if "pingpong" in open(sys.argv[1]).readline() else "connection"
def pooled(name):
    values = sorted(float(v) / 1000 for v in open(f"{sys.argv[2]}/lat-{name}").read().split())
    return values[len(values) // 2], values[int(len(values) * 0.99) - 1]
for name in ("A", "B"):
    r = rows[name]
    p50, p99 = pooled(name)
    print(f"SUMMARY {name}: CPU us per {what} median {statistics.median(x[1] for x in r):.1f} "
          f"(rounds {' '.join(f'{x[1]:.0f}' for x in r)}); rate median {statistics.median(x[3] for x in r):.1f}/s; "
          f"pooled p50 {p50:.0f} us, p99 {p99:.0f} us")
pairs = [b[1] / a[1] for a, b in zip(rows["A"], rows["B"])]
p50s = [b[2] / a[2] for a, b in zip(rows["A"], rows["B"])]
rates = [b[3] / a[3] for a, b in zip(rows["A"], rows["B"])]
print(f"SUMMARY B/A per round: CPU per {what} median {statistics.median(pairs):.3f} "
      f"({' '.join(f'{x:.2f}' for x in pairs)}); rate median {statistics.median(rates):.3f}; "
      f"p50 median {statistics.median(p50s):.3f}")
EOF
