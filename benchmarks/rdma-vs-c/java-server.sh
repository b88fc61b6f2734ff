#!/bin/bash
# java-server.sh - the Java side of the comparison: starts the sample app's runnable jar
# (sample-app/target/sample-app-*.jar) as the server, waits until it serves, and stops it
# gracefully on SIGTERM.
#
#   java-server.sh hello|pingpong ADDR PORT            vm-bench.sh's server interface
#   java-server.sh both ADDR HELLO_PORT PINGPONG_PORT  one JVM for both protocols (compare.sh)
#
# The sample app always has all its endpoints: hello (the default endpoint), pingpong, read and
# five more. The ones not asked for get ports out of the way (the asked one + 1000, then read and
# the others from the higher of the two + 1001), and its region file is named after the hello port,
# so that two servers (ab-in-vm.sh) run side by side.
# Ready means /actuator/health answers UP (the starter's health contributor reports UP only
# when every endpoint listens); then one line is printed:
#   java-server: listening hello=ADDR:P pingpong=ADDR:P pid=JAVA_PID http=ADDR:HTTP_PORT
# SIGTERM (or SIGINT) is passed to the JVM, which runs Spring's graceful shutdown; the
# wrapper exits 0 when the JVM exited 0 or 143 (the JVM's code after SIGTERM), else with
# the JVM's code.
#
# Environment:
#   SAMPLE_JAR              the jar (default: the one in sample-app/target)
#   JAVA_SERVER_OPTS        JVM options (default below; see docs/performance.md)
#   JAVA_SERVER_EXTRA_OPTS  JVM options added to those (perf-in-vm.sh: what perf needs)
#   JAVA_SERVER_HTTP_PORT   actuator port (default 8080); actuator is bound to ADDR (inside
#                           the VM only 198.18.0.0/15 is used) and exposes only health and
#                           metrics (the sample's own configuration also exposes shutdown)
#   JAVA_SERVER_START_TIMEOUT  seconds to wait for UP (default 300: the JVM starts in 45-80 s
#                           under the emulator)
#   JAVA_SERVER_ARGS        more application arguments (e.g. --logging.level.root=WARN)
#   JAVA_SERVER_LAUNCHER    a command the JVM runs under (perf-in-vm.sh: perf record ... --); the
#                           pid printed is then the launcher's
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")

usage() { echo "usage: java-server.sh hello|pingpong ADDR PORT | both ADDR HELLO_PORT PINGPONG_PORT" >&2; exit 2; }
[ $# -ge 3 ] || usage
case $1 in
  hello) hello_port=$3; pingpong_port=$(( $3 + 1000 ));;
  pingpong) pingpong_port=$3; hello_port=$(( $3 + 1000 ));;
  both) [ $# -ge 4 ] || usage; hello_port=$3; pingpong_port=$4;;
  *) usage;;
esac
addr=$2
read_port=$(( (hello_port > pingpong_port ? hello_port : pingpong_port) + 1001 ))

JAR=${SAMPLE_JAR:-$(ls "$ROOT"/sample-app/target/sample-app-*.jar 2>/dev/null | grep -v -- '-plain\.jar$' | head -1)}
[ -n "$JAR" ] && [ -f "$JAR" ] || { echo "java-server: no sample-app jar (build it: mvn -B -pl sample-app -am package)" >&2; exit 1; }
# Serial GC: 2 vCPUs shared with the client and the emulated NIC, a heap of a few MB live
# data: no concurrent GC threads competing for them, and the smallest footprint. Heap capped
# so the resident size says what the app needs, not what 1/4 of the VM's RAM allows.
# The default JIT (C1, then C2): compare-in-vm.sh gives the JVM unmeasured rounds until its
# compiler threads are quiet. C1 only (-XX:TieredStopAtLevel=1, as the end-to-end tests run the
# app, to start fast) made one ping-pong client's p50 1.6-3.5x the C server's in about half of the
# rounds; with C2 it is within 0.94-1.11 (docs/performance.md). JAVA_SERVER_OPTS="-XX:TieredStopAtLevel=1 ..."
# measures C1 only. No performance-data file (-XX:-UsePerfData, as often in containers):
# its sampler thread woke every 50 ms and took 2-3.5 % of the server's CPU in the loaded runs
# (measured under load); jps and jstat then do not list the JVM, jcmd PID still works.
JAVA_SERVER_OPTS=${JAVA_SERVER_OPTS:--XX:+UseSerialGC -Xms64m -Xmx256m -XX:-UsePerfData}
HTTP_PORT=${JAVA_SERVER_HTTP_PORT:-8080}
START_TIMEOUT=${JAVA_SERVER_START_TIMEOUT:-300}

# shellcheck disable=SC2086  # JAVA_SERVER_LAUNCHER, JAVA_SERVER_*OPTS and JAVA_SERVER_ARGS are word lists
${JAVA_SERVER_LAUNCHER:-} java $JAVA_SERVER_OPTS ${JAVA_SERVER_EXTRA_OPTS:-} -jar "$JAR" \
  --rpma.server.address="$addr" \
  --rpma.server.port="$hello_port" \
  --rpma.server.endpoints.pingpong.port="$pingpong_port" \
  --rpma.server.endpoints.read.port="$read_port" \
  --rpma.server.endpoints.write.port=$((read_port + 1)) \
  --rpma.server.endpoints.flush.port=$((read_port + 2)) \
  --rpma.server.endpoints.gpspm.port=$((read_port + 3)) \
  --rpma.server.endpoints.echo.port=$((read_port + 4)) \
  --rpma.server.endpoints.read-to-persistent.port=$((read_port + 5)) \
  --rpma.server.regions.persistent.path="${TMPDIR:-/tmp}/rpma-java-server-$hello_port.region" \
  --server.address="$addr" --server.port="$HTTP_PORT" \
  --management.endpoints.web.exposure.include=health,metrics \
  ${JAVA_SERVER_ARGS:-} &
jpid=$!

stop() { kill -TERM "$jpid" 2>/dev/null; }
trap stop TERM INT

health=http://$addr:$HTTP_PORT/actuator/health
deadline=$(( $(date +%s) + START_TIMEOUT ))
until curl -sf --max-time 5 "$health" 2>/dev/null | grep -q '"status":"UP"'; do
  if ! kill -0 "$jpid" 2>/dev/null; then
    wait "$jpid"; rc=$?
    echo "java-server: the JVM exited with $rc before it served" >&2
    exit $(( rc == 0 ? 1 : rc ))
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "java-server: not UP after ${START_TIMEOUT}s; stopping it" >&2
    kill -KILL "$jpid" 2>/dev/null; wait "$jpid" 2>/dev/null
    exit 1
  fi
  sleep 0.5
done
echo "java-server: listening hello=$addr:$hello_port pingpong=$addr:$pingpong_port pid=$jpid http=$addr:$HTTP_PORT"

# `wait` returns early when a trapped signal arrives; wait again until the JVM is gone
while :; do
  wait "$jpid"; rc=$?
  kill -0 "$jpid" 2>/dev/null || break
done
echo "java-server: the JVM exited with $rc"
[ "$rc" = 0 ] || [ "$rc" = 143 ] && exit 0
exit "$rc"
