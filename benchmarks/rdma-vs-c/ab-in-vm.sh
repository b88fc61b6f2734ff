#!/bin/bash
# ab-in-vm.sh - runs INSIDE the soft-RoCE VM: two builds of the sample app (jars A and B) side by
# side, each serving ping-pong to the same C load client, in alternating order (A B, B A, ...), to
# see what one change to the Java server buys: the server's CPU time per round trip (from
# /proc/PID/stat) and the round-trip p50 / p99, per round and pooled.
#
#   tools/rxe-vm/rxe-vm.sh -t 1500 -w "$PWD/benchmarks/rdma-vs-c/target" -- \
#     env JAR_A=/path/before.jar JAR_B=/path/after.jar benchmarks/rdma-vs-c/ab-in-vm.sh
#
# Both JVMs run for the whole comparison (java-server.sh, its JVM options); each gets the same
# warm-up first. Run it twice with JAR_A and JAR_B swapped: the first two runs (docs/performance.md)
# each favoured the server started first, A, by more than the change being measured. Environment (defaults in brackets): JAR_A, JAR_B (required), ADDR
# [$RPMA_TEST_SAME_IP or 198.18.0.1], ROUNDS [8], CONCURRENCY [4], PINGPONG_ROUNDS [500 per
# client and round], WARMUP_PINGPONG [10000 per client]. Output: RESULT lines of load_client with
# server=A|B, rep= and cpu_ms=, then a summary.
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
ROUNDS=${ROUNDS:-8}
CONCURRENCY=${CONCURRENCY:-4}
PINGPONG_ROUNDS=${PINGPONG_ROUNDS:-500}
WARMUP_PINGPONG=${WARMUP_PINGPONG:-10000}
: "${JAR_A:?JAR_A: the first sample-app jar}" "${JAR_B:?JAR_B: the second sample-app jar}"
LOG=$(mktemp -d /tmp/ab.XXXXXX)
RESULTS=$LOG/results.txt

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"
# the ping-pong port of server A or B
port_of() { if [ "$1" = A ]; then echo 7206; else echo 7216; fi; }

SAMPLE_JAR=$JAR_A JAVA_SERVER_HTTP_PORT=8080 start_java_server "$LOG/a.log" 7204 7206 \
  || { echo "FAIL: server A did not start"; tail -n 40 "$LOG/a.log"; exit 1; }
pid_a=$java_pid
SAMPLE_JAR=$JAR_B JAVA_SERVER_HTTP_PORT=8081 start_java_server "$LOG/b.log" 7214 7216 \
  || { echo "FAIL: server B did not start"; tail -n 40 "$LOG/b.log"; exit 1; }
pid_b=$java_pid
trap 'kill $pid_a $pid_b 2>/dev/null; wait' EXIT

# run A|B REP
run() {
  local pid t0 t1 out
  if [ "$1" = A ]; then pid=$pid_a; else pid=$pid_b; fi
  t0=$(cpu_ticks "$pid")
  out=$("$BIN/load_client" pingpong "$ADDR" "$(port_of "$1")" --rounds "$PINGPONG_ROUNDS" --warmup 200 \
    --concurrency "$CONCURRENCY" --timeout 300 --latency-file "$LOG/lat-$1") || { echo "FAIL: $1 rep $2"; return 1; }
  t1=$(cpu_ticks "$pid")
  echo "$out" | sed "s/^RESULT pingpong /RESULT pingpong server=$1 rep=$2 cpu_ms=$(( (t1 - t0) * 1000 / $(getconf CLK_TCK) )) /" \
    | tee -a "$RESULTS"
}

for server in A B; do
  "$BIN/load_client" pingpong "$ADDR" "$(port_of $server)" --rounds "$WARMUP_PINGPONG" --concurrency 4 --timeout 600 > /dev/null \
    || { echo "FAIL: warm-up of $server"; exit 1; }
done
for rep in $(seq "$ROUNDS"); do
  if [ $((rep % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for server in $order; do run "$server" "$rep" || exit 1; done
done

# cpu per round trip and p50 per round; pooled percentiles from the latency files
python3 - "$RESULTS" "$LOG" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv)
    rows.setdefault(f["server"], []).append((int(f["rep"]), float(f["cpu_ms"]) * 1000 / int(f["rounds"]),
                                            float(f["p50_us"]), float(f["p99_us"])))
def pooled(name):
    values = sorted(float(v) / 1000 for v in open(f"{sys.argv[2]}/lat-{name}").read().split())
    return values[len(values) // 2], values[int(len(values) * 0.99) - 1]
for name in ("A", "B"):
    r = rows[name]
    p50, p99 = pooled(name)
    print(f"SUMMARY {name}: CPU us per round trip median {statistics.median(x[1] for x in r):.1f} "
          f"(rounds {' '.join(f'{x[1]:.0f}' for x in r)}); pooled p50 {p50:.0f} us, p99 {p99:.0f} us")
pairs = [b[1] / a[1] for a, b in zip(rows["A"], rows["B"])]
p50s = [b[2] / a[2] for a, b in zip(rows["A"], rows["B"])]
print(f"SUMMARY B/A per round: CPU per round trip median {statistics.median(pairs):.3f} "
      f"({' '.join(f'{x:.2f}' for x in pairs)}); p50 median {statistics.median(p50s):.3f}")
EOF
