#!/usr/bin/env bash
# run-e2e.sh - the sample app's end-to-end tests over real RDMA, in one command: builds the
# runnable jar and the test classes on this machine, then runs the JUnit classes of
# dev.rpma.sample.e2e (tag "rdma") with plain `java` inside ONE boot of the soft-RoCE VM
# (tools/rxe-vm), or directly when this machine has an RDMA device.
#
#   tools/e2e/run-e2e.sh [--no-build | --no-maven] [--containers] [--mode vm|direct|auto] [-t SEC]
#                        [--select-class CLASS]... [-DNAME=VALUE]...
#
# --no-build uses what an earlier run built; --no-maven builds the C programs and the images but
# takes the jar and the test classes from a Maven build just made (mvn install or package; the
# sample-app module writes the tests' class path, target/e2e-classpath.txt, when it packages).
#
# -DNAME=VALUE sets a system property of the test JVM, e.g. -Drpma.e2e.rejects=200 or
# -Drpma.e2e.soak.minutes=20 (tools/e2e/soak.sh).
#
# Both topologies run: server and client on one address (rxe0, 198.18.0.1) and server on
# 198.18.3.2 reached over the veth pair from 198.18.3.1. In direct mode set RPMA_TEST_SAME_IP
# (and optionally RPMA_TEST_SERVER_IP) to addresses of this machine's RDMA interfaces; by default
# both are the IPv4 address of the first netdev an RDMA device sits on.
#
# --containers (or RPMA_E2E_CONTAINERS=1) adds, in the same VM boot, the tests of tag "containers":
# the images of tools/container/build-images.sh are built on this machine (docker.io; a dockerd is
# started here if none runs), saved, and loaded into a docker daemon started in the VM
# (tools/e2e/in-vm-docker.sh; the VM gets 6 GiB); docs/containers.md.
#
# Output: JUnit XML, the console output, the app's and clients' logs and measurements.txt in
# sample-app/target/e2e-reports/. Exit code: 0 all passed, non-zero otherwise (the console
# launcher's: 1 failures, 2 no tests; 124 VM timeout; 125 VM or set-up failure; the build's).
set -euo pipefail

cd "$(dirname "$(realpath "$0")")/../.."
ROOT=$PWD
BUILD=1
MAVEN=1
MODE=auto
TIMEOUT=1500
SELECT=()
PROPERTIES=()
CONTAINERS=${RPMA_E2E_CONTAINERS:-0}
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift;;
    --no-maven) MAVEN=0; shift;;
    --containers) CONTAINERS=1; shift;;
    --mode) MODE=$2; shift 2;;
    -t) TIMEOUT=$2; shift 2;;
    --select-class) SELECT+=(--select-class "$2"); shift 2;;
    -D?*=*) PROPERTIES+=("$1"); shift;;
    -h|--help) sed -n '2,29p' "$0"; exit 0;;
    *) echo "run-e2e: unknown argument $1" >&2; exit 2;;
  esac
done
[ ${#SELECT[@]} -gt 0 ] || SELECT=(--select-package dev.rpma.sample.e2e)

start=$(date +%s)
REPORTS=$ROOT/sample-app/target/e2e-reports
CLASSPATH_FILE=$ROOT/sample-app/target/e2e-classpath.txt

if [ $BUILD = 1 ]; then
  if [ -f tools/install-deps.sh ]; then bash tools/install-deps.sh; fi
  if [ $MAVEN = 1 ]; then
    echo "run-e2e: building the sample app, its client and the test classes" >&2
    # one reactor build: the modules resolve to each other's target/, nothing is installed into ~/.m2;
    # packaging sample-app writes the tests' class path
    mvn -B -q -Dstyle.color=never package -pl sample-app -am -DskipTests >&2
  fi
  # the C clients and servers that behave as librpma's examples (and the load and bad-message tools)
  bash tools/e2e/build-c-clients.sh >/dev/null
  # ---- containers (run-e2e.sh --containers): the images, saved for the VM's daemon
  if [ "$CONTAINERS" = 1 ]; then
    bash tools/container/ensure-dockerd.sh
    rm -rf "$ROOT/sample-app/target/images"
    bash tools/container/build-images.sh --no-build --save "$ROOT/sample-app/target/images"
  fi
  # ---- end containers
fi
C_CLIENTS=$ROOT/sample-app/target/c-clients
[ -x "$C_CLIENTS/pingpong_client" ] || { echo "run-e2e: no C clients in $C_CLIENTS: run without --no-build" >&2; exit 125; }
JAR=$(ls "$ROOT"/sample-app/target/sample-app-*.jar 2>/dev/null | grep -v -- '-plain\.jar$' | head -1 || true)
[ -n "$JAR" ] && [ -f "$CLASSPATH_FILE" ] || { echo "run-e2e: no build found: run without --no-build" >&2; exit 125; }
# the app and its Java clients start from the extracted jar with a class data sharing archive made here
# (tools/e2e/prepare-app.sh): under the VM's emulation a start of the runnable jar takes a minute
APP_JVM_OPTIONS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
APP_JVM_OPTIONS="$APP_JVM_OPTIONS $(bash tools/e2e/prepare-app.sh "$JAR" "$ROOT/sample-app/target/e2e-app" $APP_JVM_OPTIONS)"
JAR=$ROOT/sample-app/target/e2e-app/app/$(basename "$JAR")

rm -rf "$REPORTS"
mkdir -p "$REPORTS"

if [ "$MODE" = auto ]; then
  if tools/rxe-vm/has-rdma-device.sh; then MODE=direct; else MODE=vm; fi
fi
if [ "$MODE" = direct ]; then
  RPMA_TEST_SAME_IP=${RPMA_TEST_SAME_IP:-$(tools/e2e/rdma-address.sh || true)}
  [ -n "$RPMA_TEST_SAME_IP" ] || { echo "run-e2e: set RPMA_TEST_SAME_IP to the IP of an RDMA interface" >&2; exit 125; }
  export RPMA_TEST_SAME_IP
  export RPMA_TEST_SERVER_IP=${RPMA_TEST_SERVER_IP:-$RPMA_TEST_SAME_IP}
  echo "run-e2e: mode direct (this machine has an RDMA device): same-IP $RPMA_TEST_SAME_IP, server $RPMA_TEST_SERVER_IP" >&2
else
  echo "run-e2e: mode vm (no RDMA device here): soft-RoCE VM, rxe0 198.18.0.1 and veth 198.18.3.1 -> 198.18.3.2" >&2
fi

# ---- containers (run-e2e.sh --containers): a docker daemon in the same VM boot, and its tests
EXTRA=()
JVM_EXTRA=()
if [ "$CONTAINERS" = 1 ]; then
  [ -f "$ROOT/sample-app/target/images/sample-app.tar" ] || { echo "run-e2e: no saved images: run without --no-build" >&2; exit 125; }
  EXTRA=(--include-tag containers)
  [ "$MODE" = vm ] && EXTRA+=(-m 6144 --wrapper "$ROOT/tools/e2e/in-vm-docker.sh" --wrapper "$ROOT/sample-app/target/images"
                              --wrapper "$REPORTS" --wrapper --)
  # Testcontainers writes ~/.testcontainers.properties: not into the user's home
  JVM_EXTRA=(-Duser.home="$ROOT/sample-app/target/e2e-home")
  mkdir -p "$ROOT/sample-app/target/e2e-home"
  TIMEOUT=$((TIMEOUT + 900))
fi
# ---- end containers
set +e
tools/rxe-vm/run-java-tests.sh --mode "$MODE" -t "$TIMEOUT" \
  --classpath-file "$CLASSPATH_FILE" \
  --class-path "$ROOT/sample-app/target/test-classes" --class-path "$ROOT/sample-app/target/classes" \
  --reports-dir "$REPORTS" "${SELECT[@]}" --include-tag rdma "${EXTRA[@]}" \
  -- -Dsample.jar="$JAR" -Dsample.logs="$REPORTS" -Dsample.c-clients="$C_CLIENTS" "${JVM_EXTRA[@]}" "${PROPERTIES[@]}" \
     "-Dsample.jvm-options=$APP_JVM_OPTIONS"
rc=$?
set -e

echo "----- measurements ($REPORTS/measurements.txt) -----"
cat "$REPORTS/measurements.txt" 2>/dev/null || echo "(none recorded)"
# last, where a CI log cut to its tail still shows them: which tests failed and why, without stack frames
if [ $rc != 0 ] && [ -f "$REPORTS/console.txt" ]; then
  echo "----- failed tests ($REPORTS/console.txt) -----"
  # the console launcher's summary of the failures; of the stack frames only the project's own
  awk '/^Failures \(/ { on = 1 } /^Test run finished/ { on = 0 }
       on && !(/^       [^ ]+\(.*\)$/ && !/^       dev\.rpma\./)' "$REPORTS/console.txt" | head -100
fi
echo "run-e2e: mode $MODE, exit code $rc, wall time $(( $(date +%s) - start )) s (build included); reports in $REPORTS"
exit $rc
