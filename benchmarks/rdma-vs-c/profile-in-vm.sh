#!/bin/bash
# profile-in-vm.sh - runs INSIDE the soft-RoCE VM (profile.sh starts it): the sample app alone
# under Java Flight Recorder, driven by the C load client, to see where the Java server's time
# goes. The recording covers only the measured part: it starts after a warm-up (jcmd JFR.start)
# and is dumped before the server stops.
#
# Environment (defaults in brackets): ADDR [$RPMA_TEST_SAME_IP or 198.18.0.1], PROTOCOLS
# ["hello pingpong"], HELLO_CYCLES [600] (sequential), PINGPONG_ROUNDS [20000] (1 client),
# WARMUP_HELLO [150 per client, 8 clients], WARMUP_PINGPONG [10000 per client, 4 clients],
# JFR_FILE [$BIN/profile.jfr], JFR_SETTINGS [profile].
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
BIN=${BIN:-$HERE/target}
ADDR=${ADDR:-${RPMA_TEST_SAME_IP:-198.18.0.1}}
PROTOCOLS=${PROTOCOLS:-hello pingpong}
HELLO_CYCLES=${HELLO_CYCLES:-600}
PINGPONG_ROUNDS=${PINGPONG_ROUNDS:-20000}
WARMUP_HELLO=${WARMUP_HELLO:-150}
WARMUP_PINGPONG=${WARMUP_PINGPONG:-10000}
JFR_FILE=${JFR_FILE:-$BIN/profile.jfr}
JFR_SETTINGS=${JFR_SETTINGS:-profile}
LOG=$(mktemp -d /tmp/profile.XXXXXX)
rc=0

# shellcheck source=lib-servers.sh
. "$HERE/lib-servers.sh"
start_java_server "$LOG/java.log" 7204 7206 || { echo "FAIL: the Java server did not start"; tail -n 50 "$LOG/java.log"; exit 1; }
echo "== java pid $java_pid"
"$BIN/load_client" hello "$ADDR" 7204 --cycles "$WARMUP_HELLO" --concurrency 8 || rc=1
"$BIN/load_client" pingpong "$ADDR" 7206 --rounds "$WARMUP_PINGPONG" --concurrency 4 || rc=1
rm -f "$JFR_FILE"
jcmd "$java_pid" JFR.start name=bench settings="$JFR_SETTINGS" || rc=1
for proto in $PROTOCOLS; do
  if [ "$proto" = hello ]; then
    "$BIN/load_client" hello "$ADDR" 7204 --cycles "$HELLO_CYCLES" --concurrency 1 || rc=1
  else
    "$BIN/load_client" pingpong "$ADDR" 7206 --rounds "$PINGPONG_ROUNDS" --concurrency 1 || rc=1
  fi
done
jcmd "$java_pid" JFR.dump name=bench filename="$JFR_FILE" || rc=1
kill -TERM $java_wrapper; wait $java_wrapper || rc=1
cp "$LOG/java.log" "$BIN/profile-java.log"
rm -rf "$LOG"
exit $rc
