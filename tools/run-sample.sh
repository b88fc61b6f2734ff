#!/usr/bin/env bash
# run-sample.sh - the main job in one command: the sample app serving librpma's example protocols
# over real RDMA.
#
#   tools/run-sample.sh [--vm] [APP-ARGUMENT...]
#
# * This machine has an RDMA device (/sys/class/infiniband is not empty): builds the runnable jar and
#   starts the sample app directly, in the foreground, on the IPv4 address of the first netdev an RDMA
#   device sits on (or RPMA_SERVER_ADDRESS); APP-ARGUMENTs go to the app. Stop it with Ctrl-C.
# * No RDMA device (or --vm): builds, boots the soft-RoCE VM (tools/rxe-vm), starts the app inside on
#   198.18.0.1 (rxe0), runs the three Java clients (hello, read, pingpong) against it, prints their
#   replies and the numbers from /actuator (health, rpma, prometheus), stops the app and exits with 0
#   when all of it worked.
# The first lines of the output say which mode it used.
#
# On a fresh Debian 12 machine (as root) it installs what it needs: tools/install-deps.sh (JDK 17,
# Maven, librpma), curl and jq here, QEMU and the guest kernel through tools/rxe-vm.
set -euo pipefail

cd "$(dirname "$(realpath "$0")")/.."
ROOT=$PWD
FORCE_VM=0
if [ "${1:-}" = --vm ]; then FORCE_VM=1; shift; fi

if [ $FORCE_VM = 0 ] && tools/rxe-vm/has-rdma-device.sh; then MODE=direct; else MODE=vm; fi
if [ $MODE = direct ]; then
  echo "run-sample: MODE: DIRECT - this machine has RDMA device(s): $(tools/rxe-vm/has-rdma-device.sh -v | tr '\n' ' ')"
else
  echo "run-sample: MODE: SOFT-ROCE VM - no RDMA device on this machine$([ $FORCE_VM = 1 ] && echo ' (--vm)'), so the app runs inside the soft-RoCE VM (tools/rxe-vm) on 198.18.0.1"
fi

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
JAR=$(ls "$ROOT"/sample-app/target/sample-app-*.jar | grep -v -- '-plain\.jar$' | head -1)

if [ $MODE = direct ]; then
  ADDRESS=${RPMA_SERVER_ADDRESS:-}
  if [ -z "$ADDRESS" ]; then
    for dev in /sys/class/infiniband/*; do
      for net in "$dev"/device/net/*; do
        [ -e "$net" ] || continue
        ADDRESS=$(ip -4 -o addr show dev "$(basename "$net")" | awk '{split($4,a,"/"); print a[1]; exit}')
        [ -n "$ADDRESS" ] && break 2
      done
    done
    # soft-RoCE devices have no device/net link: ask rdma for their netdev
    [ -n "$ADDRESS" ] || ADDRESS=$(rdma link show 2>/dev/null | awk '{for(i=1;i<NF;i++) if($i=="netdev") print $(i+1)}' \
      | while read -r n; do ip -4 -o addr show dev "$n" | awk '{split($4,a,"/"); print a[1]; exit}'; done | head -1)
  fi
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
