#!/usr/bin/env bash
# sample-demo.sh - starts the sample app on an RDMA address, runs the three Java clients against it
# (hello, read, pingpong), prints their replies and the numbers under /actuator, and stops the app.
# tools/run-sample.sh runs it inside the soft-RoCE VM; it runs as well on any machine with an RDMA
# device.
#
#   sample-demo.sh --jar JAR --address ADDRESS --logs DIR [--rounds N] [--http-port PORT]
#
# Needs java, curl and jq. Exit code: 0 when the app started, every client succeeded and the app
# stopped with exit code 0; 1 otherwise.
set -uo pipefail

JAR=
ADDRESS=
LOGS=
ROUNDS=100
HTTP_PORT=8080
while [ $# -gt 0 ]; do
  case "$1" in
    --jar) JAR=$2; shift 2;;
    --address) ADDRESS=$2; shift 2;;
    --logs) LOGS=$2; shift 2;;
    --rounds) ROUNDS=$2; shift 2;;
    --http-port) HTTP_PORT=$2; shift 2;;
    *) echo "sample-demo: unknown argument $1" >&2; exit 2;;
  esac
done
[ -f "$JAR" ] && [ -n "$ADDRESS" ] && [ -n "$LOGS" ] || { echo "sample-demo: --jar, --address and --logs are required" >&2; exit 2; }
mkdir -p "$LOGS"
APP_LOG=$LOGS/sample-app.log
# C1 only, the serial GC and no performance-data sampler: under software emulation the JVM is about
# 10x slower and has 2 vCPUs (the options of benchmarks/rdma-vs-c/java-server.sh)
JAVA=(java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData)
BASE=http://127.0.0.1:$HTTP_PORT
failures=0
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN{printf "%.1f", e-s}'; }
section() { printf '\n== %s ==\n' "$*"; }

section "starting the sample app on $ADDRESS (RDMA ports 7204 hello, 7205 read, 7206 pingpong; HTTP $BASE)"
echo "\$ java -jar $(basename "$JAR") --rpma.server.address=$ADDRESS --server.port=$HTTP_PORT"
start=$(now)
"${JAVA[@]}" -jar "$JAR" --rpma.server.address="$ADDRESS" --server.port="$HTTP_PORT" > "$APP_LOG" 2>&1 &
APP=$!
trap 'kill -9 $APP 2>/dev/null' EXIT
up=0
for _ in $(seq 1 1200); do
  if ! kill -0 $APP 2>/dev/null; then break; fi
  if curl -sf "$BASE/actuator/health" > /dev/null 2>&1; then up=1; break; fi
  sleep 0.5
done
if [ $up = 0 ]; then
  echo "sample-demo: the app did not come up; the end of its log ($APP_LOG):"
  tail -40 "$APP_LOG"
  exit 1
fi
echo "up after $(since "$start") s (JVM start included)"

client() {
  local name=$1 what=$2; shift 2
  section "$name $what"
  echo "\$ java -jar $(basename "$JAR") --client=$name --server=$ADDRESS $*"
  local t=$(now)
  "${JAVA[@]}" -jar "$JAR" --client="$name" --server="$ADDRESS" "$@"
  local rc=$?
  echo "(exit code $rc, $(since "$t") s including the client JVM's start)"
  [ $rc = 0 ] || failures=$((failures + 1))
}
client hello "(librpma example 01-connection: greetings in the private data)"
client read "(02-read-to-volatile: rpma_read of the server's registered string)"
client pingpong "(08-messages-ping-pong: send/recv of an 8-byte counter)" --rounds="$ROUNDS"

section "/actuator/health"
curl -s "$BASE/actuator/health" | jq -r '"status: \(.status)", (.components.rpma.components // {} | to_entries[]
  | "  rpma endpoint \(.key): \(.value.status), \(.value.details.state), \(.value.details.activeSessions) active session(s)")'

section "/actuator/rpma"
# the server deletes a connection after its CLOSED event: give the last one a moment
for _ in $(seq 1 50); do
  active=$(curl -s "$BASE/actuator/rpma" | jq '[.endpoints[].sessions.active] | add')
  [ "$active" = 0 ] && break
  sleep 0.2
done
curl -s "$BASE/actuator/rpma" | jq -r '.endpoints[] | "\(.name) \(.address):\(.port) \(.state): requests obtained \(.requests.obtained), accepted \(.requests.accepted), rejected \([.requests.rejected[]] | add); connection events established \(.connectionEvents.established), closed \(.connectionEvents.closed), lost \(.connectionEvents.lost); sessions active \(.sessions.active), ended \([.sessions.ended[]] | add); messages received \(.messages.received // 0), sent \(.messages.sent // 0); errors \(.errors | length)"'

section "/actuator/prometheus (the starter's rpma_* and the sample's sample_* meters, non-zero counters)"
curl -s "$BASE/actuator/prometheus" | grep -E '^(rpma_requests_total|rpma_connection_events_total|rpma_sessions_active|rpma_sessions_ended|rpma_messages_total|rpma_message_bytes|rpma_request_queue_capacity|rpma_handler_duration_seconds_count|rpma_message_handler_duration_seconds_count|sample_)' \
  | grep -Ev '_total\{[^}]*\} 0\.0$'

# SIGTERM, as a service manager stops it: the app exposes no shutdown endpoint
section "stopping the app (SIGTERM: the graceful stop, then exit code 143)"
t=$(now)
kill -TERM $APP
wait $APP
app_rc=$?
trap - EXIT
echo "the app exited with code $app_rc after $(since "$t") s; its log: $APP_LOG"
[ $app_rc = 143 ] || failures=$((failures + 1))

if [ $failures = 0 ]; then
  section "all three clients got their replies; the app stopped cleanly"
  exit 0
fi
section "$failures step(s) failed"
exit 1
