#!/bin/bash
# profile.sh - where the Java server spends its time under the C load client, over soft-RoCE:
# builds like compare.sh, runs profile-in-vm.sh in ONE VM boot (the sample app under Java Flight
# Recorder), then prints from the recording the top frames (self) and the top frames of the
# rpma threads' stacks, for Java code (jdk.ExecutionSample) and for threads in native code
# (jdk.NativeMethodSample), and the allocation by class. Extra arguments go to rxe-vm.sh.
#
#   benchmarks/rdma-vs-c/profile.sh                   # hello and pingpong
#   PROTOCOLS=hello SKIP_BUILD=1 benchmarks/rdma-vs-c/profile.sh
#   TOP=40 benchmarks/rdma-vs-c/profile.sh --report-only   # again from target/profile.jfr
set -eu
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
TOP=${TOP:-25}
JFR=$HERE/target/profile.jfr
if [ "${1:-}" != --report-only ]; then
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    (cd "$ROOT" && mvn -B -q ${MVN_ARGS:-} -DskipTests -pl sample-app -am package)
    "$HERE/build.sh"
  fi
  mkdir -p "$HERE/target"
  "$ROOT/tools/rxe-vm/rxe-vm.sh" -t 1200 "$@" -w "$HERE/target" -- "$HERE/profile-in-vm.sh"
fi
[ -s "$JFR" ] || { echo "profile.sh: no recording at $JFR" >&2; exit 1; }

# frames as "class.method" (line numbers dropped), counted over all samples
top() {   # EVENT DEPTH: DEPTH 1 = the sampled frame itself, more = any of the top DEPTH frames
  jfr print --json --events "$1" "$JFR" | jq -r --argjson depth "$2" '
    .recording.events[] | select(.values.sampledThread.javaName // "" | test("rpma|pingpong|default"))
    | [.values.stackTrace.frames[:$depth][] | "\(.method.type.name).\(.method.name)"] | unique[]' \
    | sort | uniq -c | sort -rn | head -n "$TOP"
}
samples() { jfr print --json --events "$1" "$JFR" | jq '[.recording.events[]] | length'; }
echo "== Java code on rpma threads: $(samples jdk.ExecutionSample) samples (all threads); top frames (self)"
top jdk.ExecutionSample 1
echo "== Java code on rpma threads: frames anywhere in the top 12 (inclusive)"
top jdk.ExecutionSample 12
echo "== rpma threads in native code: $(samples jdk.NativeMethodSample) samples (all threads); the native method and its callers (top 4)"
top jdk.NativeMethodSample 4
for event in jdk.ExecutionSample jdk.NativeMethodSample; do
  echo "== $event per thread"
  jfr print --json --events "$event" "$JFR" | jq -r '.recording.events[].values.sampledThread.javaName' | sort | uniq -c | sort -rn | head -n 12
done
echo "== allocation (jdk.ObjectAllocationSample, weight in bytes) by class"
jfr print --json --events jdk.ObjectAllocationSample "$JFR" \
  | jq -r '.recording.events[].values | "\(.weight) \(.objectClass.name)"' \
  | awk '{ w[$2] += $1 } END { for (c in w) printf "%12d %s\n", w[c], c }' | sort -rn | head -n 15
