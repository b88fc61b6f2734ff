#!/usr/bin/env bash
# run-sample.sh - the main job in one command: the sample app serving librpma's example protocols
# over real RDMA.
#
#   tools/run-sample.sh [--vm] [--no-build] [APP-ARGUMENT...]
#
# * This machine has an RDMA device (/sys/class/infiniband is not empty): builds the runnable jar and
#   starts the sample app directly, in the foreground, on the IPv4 address of the first netdev an RDMA
#   device sits on (or RPMA_SERVER_ADDRESS); APP-ARGUMENTs go to the app. Stop it with Ctrl-C.
# * No RDMA device (or --vm): builds, boots the soft-RoCE VM (tools/rxe-vm), starts the app inside on
#   198.18.0.1 (rxe0), runs the three Java clients (hello, read, pingpong) against it, prints their
#   replies and the numbers from /actuator (health, rpma, prometheus), stops the app and exits with 0
#   when all of it worked.
# The first lines of the output say which mode it used. --no-build uses the jar already in
# sample-app/target and installs nothing.
#
# On a fresh Debian 12 machine (as root) it installs what it needs: tools/install-deps.sh (JDK 17,
# Maven, librpma), curl and jq here, QEMU and the guest kernel through tools/rxe-vm.
set -euo pipefail

cd "$(dirname "$(realpath "$0")")/.."
ROOT=$PWD
FORCE_VM=0
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --vm) FORCE_VM=1; shift;;
    --no-build) BUILD=0; shift;;
    *) break;;
  esac
done

if [ $FORCE_VM = 0 ] && tools/rxe-vm/has-rdma-device.sh; then MODE=direct; else MODE=vm; fi
if [ $MODE = direct ]; then
  echo "run-sample: MODE: DIRECT - this machine has RDMA device(s): $(tools/rxe-vm/has-rdma-device.sh -v | tr '\n' ' ')"
else
  echo "run-sample: MODE: SOFT-ROCE VM - no RDMA device on this machine$([ $FORCE_VM = 1 ] && echo ' (--vm)'), so the app runs inside the soft-RoCE VM (tools/rxe-vm) on 198.18.0.1"
fi

if [ $BUILD = 1 ]; then
  bash tools/install-deps.sh
  missing=()
  command -v curl > /dev/null || missing+=(curl)
  command -v jq > /dev/null || missing+=(jq)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "run-sample: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
      || { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }
  fi

  echo "run-sample: building the sample app (mvn package -pl sample-app -am)" >&2
  mvn -B -q -Dstyle.color=never package -pl sample-app -am -DskipTests >&2
fi
JAR=$(ls "$ROOT"/sample-app/target/sample-app-*.jar 2>/dev/null | grep -v -- '-plain\.jar$' | head -1 || true)
[ -n "$JAR" ] || { echo "run-sample: no sample-app jar in sample-app/target: run without --no-build" >&2; exit 1; }

if [ $MODE = direct ]; then
  ADDRESS=${RPMA_SERVER_ADDRESS:-$(tools/e2e/rdma-address.sh || true)}
  [ -n "$ADDRESS" ] || { echo "run-sample: no IPv4 address on an RDMA interface; set RPMA_SERVER_ADDRESS" >&2; exit 1; }
  echo "run-sample: starting the sample app on $ADDRESS (hello 7204, read 7205, pingpong 7206; /actuator on http://127.0.0.1:8080)"
  echo "run-sample: clients: java -jar $JAR --client=hello|read|pingpong --server=$ADDRESS"
  exec java -jar "$JAR" --rpma.server.address="$ADDRESS" "$@"
fi

LOGS=$ROOT/sample-app/target/run-sample
rm -rf "$LOGS"
mkdir -p "$LOGS"
start=$(date +%s)
set +e
tools/rxe-vm/rxe-vm.sh -t 1500 -w "$LOGS" -- \
  bash "$ROOT/tools/e2e/sample-demo.sh" --jar "$JAR" --address 198.18.0.1 --logs "$LOGS"
rc=$?
set -e
echo
echo "run-sample: MODE: SOFT-ROCE VM; exit code $rc; $(( $(date +%s) - start )) s in the VM; the app's log: $LOGS/sample-app.log"
exit $rc
