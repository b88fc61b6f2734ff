#!/usr/bin/env bash
# run-pmem-e2e.sh - the sample app's persistent region over real RDMA, in ONE boot of the
# soft-RoCE VM with emulated PMem (tools/rxe-vm/rxe-vm.sh -p):
#
#   tools/e2e/run-pmem-e2e.sh [--no-build] [-t SEC] [--writes N]
#
# 1. store 'file' (a file in the VM's /tmp): persist_client writes and flushes N (1000) random
#    ranges of 1 to 8192 bytes through the 'flush' endpoint (example 05's protocol; flush type
#    VISIBILITY, as the server declares no direct write to PMem); the app is killed with SIGKILL
#    and started again; a new client reads every range back and compares it. Then examples 04
#    (write + read-after-write), 05 (write + flush) and 09's shape (write, flush request, reply
#    once durable) on their endpoints, and 03 (the server reads a random string of the client's
#    into the region at 512 KiB, makes it durable, disconnects), a SIGKILL, a restart, and the
#    greeting and the string read back.
# 2. store 'dax' on /mnt/pm (ext4 -o dax on the emulated /dev/pmem0, mapped with MAP_SYNC), with
#    flush-type-persistent and direct-write-to-pmem: if the device registers it, the same random
#    writes (flush type PERSISTENT), SIGKILL, restart, read back; if it refuses (soft-RoCE has no
#    on-demand paging, and Linux pins no file system DAX page for it), the app must fail to start
#    saying so, and the step records that.
# 3. store 'dax' on a device DAX: the emulated PMem's namespace is turned into /dev/dax0.0
#    (`ndctl create-namespace --mode=devdax`; a device DAX registers without on-demand paging), with
#    flush-type-persistent and direct-write-to-pmem: the same random writes with flush type
#    PERSISTENT, SIGKILL, restart, read back; then examples 09's shape and 03 on it (the server makes
#    ranges durable with pmem_persist), SIGKILL, restart, their data read back.
#
# Output: the app's and clients' logs and results.txt in sample-app/target/pmem-e2e/. Exit code 0
# when every check passed; 1 a check failed; 124/125 from the VM; the build's.
set -euo pipefail

cd "$(dirname "$(realpath "$0")")/../.."
ROOT=$PWD
BUILD=1
TIMEOUT=1800
WRITES=${WRITES:-1000}   # the host passes --writes into the VM as WRITES
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift;;
    -t) TIMEOUT=$2; shift 2;;
    --writes) WRITES=$2; shift 2;;
    --in-vm) shift; break;;
    -h|--help) sed -n '2,27p' "$0"; exit 0;;
    *) echo "run-pmem-e2e: unknown argument $1" >&2; exit 2;;
  esac
done
OUT=$ROOT/sample-app/target/pmem-e2e
C_CLIENTS=$ROOT/sample-app/target/c-clients

if [ "${RXE_VM:-}" != 1 ]; then
  # ---------------------------------------------------------------- on the host
  if [ $BUILD = 1 ]; then
    echo "run-pmem-e2e: building the sample app and the C clients" >&2
    mvn -B -q -Dstyle.color=never package -pl sample-app -am -DskipTests >&2
    bash tools/e2e/build-c-clients.sh >/dev/null
  fi
  [ -x "$C_CLIENTS/persist_client" ] && [ -x "$C_CLIENTS/read_to_persistent_client" ] \
    || { echo "run-pmem-e2e: no C clients: run without --no-build" >&2; exit 125; }
  rm -rf "$OUT"; mkdir -p "$OUT"
  exec tools/rxe-vm/rxe-vm.sh -p -t "$TIMEOUT" -w "$OUT" -- env WRITES="$WRITES" bash "$ROOT/tools/e2e/run-pmem-e2e.sh" --in-vm
fi

# ---------------------------------------------------------------- in the VM
ADDR=$RPMA_TEST_SAME_IP
JAR=$(ls "$ROOT"/sample-app/target/sample-app-*.jar | grep -v -- '-plain\.jar$' | head -1)
CLIENT=$C_CLIENTS/persist_client
RESULTS=$OUT/results.txt
FAILED=0
APP_PID=
RUN=0
: > "$RESULTS"
say() { echo "$*" | tee -a "$RESULTS"; }
check() {   # check NAME COMMAND...: passes when COMMAND does
  if "${@:2}"; then say "PASS $1"; else say "FAIL $1"; FAILED=1; fi
}

# start_app ARGS...: the runnable jar; 0 once every endpoint listens, 1 when it exited before
# that or did not listen within START_LIMIT s (the guest's clock: under a loaded host TCG's guest
# time runs unevenly, and a start took from 30 s to several minutes)
START_LIMIT=900
start_app() {
  RUN=$((RUN + 1))
  LOG=$OUT/app-$RUN.log
  java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar "$JAR" --rpma.server.address="$ADDR" --server.port=0 "$@" > "$LOG" 2>&1 &
  APP_PID=$!
  local started=$SECONDS
  while [ $((SECONDS - started)) -lt $START_LIMIT ]; do
    if grep -qs "RDMA endpoint 'read-to-persistent' listening" "$LOG"; then
      say "app $RUN (pid $APP_PID) listening after $((SECONDS - started)) s"
      return 0
    fi
    kill -0 "$APP_PID" 2>/dev/null || { wait "$APP_PID" || true; APP_PID=; return 1; }
    sleep 1
  done
  say "app $RUN did not listen within $START_LIMIT s"
  kill -KILL "$APP_PID" 2>/dev/null || true
  wait "$APP_PID" 2>/dev/null || true
  APP_PID=
  return 1
}

kill_app() {
  kill -KILL "$APP_PID"
  wait "$APP_PID" 2>/dev/null || true
  APP_PID=
  say "app $RUN killed with SIGKILL"
}

# persist_cycle STORE FLUSHTYPE APPARGS...: random writes, SIGKILL, restart, read back
persist_cycle() {
  local store=$1 type=$2; shift 2
  local t0=$SECONDS
  check "$store: $WRITES random writes, each flushed ($type)" \
    bash -c "'$CLIENT' $ADDR 7208 random 22 $WRITES > '$OUT/$store-random.log' 2>&1 && grep -q 'Wrote $WRITES ranges, flush type $type' '$OUT/$store-random.log'"
  say "$store: writes took $((SECONDS - t0)) s"
  kill_app
  check "$store: the app starts again on the same store" start_app "$@"
  check "$store: every range read back equal after the SIGKILL" \
    bash -c "'$CLIENT' $ADDR 7208 verify 22 $WRITES > '$OUT/$store-verify.log' 2>&1 && grep -q 'Verified $WRITES ranges' '$OUT/$store-verify.log'"
}

FILE_ARGS=(--rpma.server.regions.persistent.store=file --rpma.server.regions.persistent.path=/tmp/pmem-e2e/file.region)
mkdir -p /tmp/pmem-e2e
say "store file: /tmp/pmem-e2e/file.region (the VM's RAM-backed /tmp)"
if start_app "${FILE_ARGS[@]}"; then
  persist_cycle file VISIBILITY "${FILE_ARGS[@]}"
  check "file: example 04's client (write, read-after-write)" \
    bash -c "'$CLIENT' $ADDR 7207 write > '$OUT/ex04.log' 2>&1 && grep -q 'Wrote the greeting' '$OUT/ex04.log'"
  check "file: example 05's client (write, flush VISIBILITY)" \
    bash -c "'$CLIENT' $ADDR 7208 flush > '$OUT/ex05.log' 2>&1 && grep -q 'Wrote the greeting, flush type VISIBILITY' '$OUT/ex05.log'"
  check "file: example 09's shape (write, flush request, reply once durable)" \
    bash -c "'$CLIENT' $ADDR 7209 gpspm > '$OUT/ex09.log' 2>&1 && grep -q 'Wrote the greeting, made durable by the server' '$OUT/ex09.log'"
  # example 03: the server reads the client's string into the region at 512 KiB (read-to-persistent's offset)
  EX03_TEXT="read by the server $(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"
  check "file: example 03's client (the server reads its string, makes it durable, disconnects)" \
    bash -c "'$C_CLIENTS/read_to_persistent_client' $ADDR 7211 '$EX03_TEXT' > '$OUT/ex03.log' 2>&1 && grep -qx 'Closed by the server' '$OUT/ex03.log'"
  kill_app
  start_app "${FILE_ARGS[@]}" || say "FAIL file: restart after the examples"
  check "file: the greeting the examples' clients wrote survives the SIGKILL" \
    bash -c "'$CLIENT' $ADDR 7208 greeting > '$OUT/greeting.log' 2>&1 && grep -q '^Greeting: Hello world!$' '$OUT/greeting.log'"
  check "file: the string example 03's server read survives the SIGKILL" \
    bash -c "'$CLIENT' $ADDR 7208 greeting 524288 > '$OUT/ex03-greeting.log' 2>&1 && grep -qxF 'Greeting: $EX03_TEXT' '$OUT/ex03-greeting.log'"
  kill_app
else
  say "FAIL file: the app did not start (see $LOG)"; FAILED=1
fi

DAX_ARGS=(--rpma.server.regions.persistent.store=dax --rpma.server.regions.persistent.path="$RXE_VM_PMEM/dax.region"
  --rpma.server.regions.persistent.usage=write-dst,read-src,flush-type-visibility,flush-type-persistent
  --rpma.server.regions.persistent.direct-write-to-pmem=true)
say "store dax: $RXE_VM_PMEM/dax.region ($(grep " $RXE_VM_PMEM " /proc/mounts | cut -d' ' -f3,4))"
if start_app "${DAX_ARGS[@]}"; then
  persist_cycle dax PERSISTENT "${DAX_ARGS[@]}"
  kill_app
else
  check "dax: the app refuses to start, saying the device cannot register file system DAX memory" \
    grep -q "cannot register file system DAX memory" "$LOG"
  say "dax: the region was mapped with MAP_SYNC; rpma_mr_reg refused it (no ODP on soft-RoCE)"
fi

# the same emulated PMem as a device DAX: no file system, no page cache, registered without ODP
DEVICE=/dev/dax0.0
if umount "$RXE_VM_PMEM" && modprobe -a dax_pmem device_dax \
    && ndctl create-namespace -f -e namespace0.0 --mode=devdax > "$OUT/ndctl.log" 2>&1 && [ -c "$DEVICE" ]; then
  say "store dax: device DAX $DEVICE ($(cat /sys/bus/dax/devices/dax0.0/size) bytes, align $(cat /sys/bus/dax/devices/dax0.0/align))"
  DEVDAX_ARGS=(--rpma.server.regions.persistent.store=dax --rpma.server.regions.persistent.path="$DEVICE"
    --rpma.server.regions.persistent.usage=write-dst,read-src,flush-type-visibility,flush-type-persistent
    --rpma.server.regions.persistent.direct-write-to-pmem=true)
  if start_app "${DEVDAX_ARGS[@]}"; then
    check "devdax: the region is the device, registered on soft-RoCE" \
      grep -q "RDMA region 'persistent': 1048576 bytes of DAX device $DEVICE, .*direct write to PMem declared, registered on" "$LOG"
    persist_cycle devdax PERSISTENT "${DEVDAX_ARGS[@]}"
    check "devdax: example 09's shape (write, flush request, reply once durable)" \
      bash -c "'$CLIENT' $ADDR 7209 gpspm > '$OUT/devdax-ex09.log' 2>&1 && grep -q 'Wrote the greeting, made durable by the server' '$OUT/devdax-ex09.log'"
    EX03_TEXT="read by the server $(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"
    check "devdax: example 03's client (the server reads its string, makes it durable, disconnects)" \
      bash -c "'$C_CLIENTS/read_to_persistent_client' $ADDR 7211 '$EX03_TEXT' > '$OUT/devdax-ex03.log' 2>&1 && grep -qx 'Closed by the server' '$OUT/devdax-ex03.log'"
    kill_app
    start_app "${DEVDAX_ARGS[@]}" || say "FAIL devdax: restart after the examples"
    check "devdax: the greeting example 09's client wrote survives the SIGKILL" \
      bash -c "'$CLIENT' $ADDR 7208 greeting > '$OUT/devdax-greeting.log' 2>&1 && grep -q '^Greeting: Hello world!$' '$OUT/devdax-greeting.log'"
    check "devdax: the string example 03's server read survives the SIGKILL" \
      bash -c "'$CLIENT' $ADDR 7208 greeting 524288 > '$OUT/devdax-ex03-greeting.log' 2>&1 && grep -qxF 'Greeting: $EX03_TEXT' '$OUT/devdax-ex03-greeting.log'"
    kill_app
  else
    say "FAIL devdax: the app did not start on $DEVICE (see $LOG)"; FAILED=1
  fi
else
  say "FAIL devdax: could not make $DEVICE from the emulated PMem (see $OUT/ndctl.log)"; FAILED=1
fi

say "result: $([ $FAILED = 0 ] && echo passed || echo FAILED)"
exit $FAILED
