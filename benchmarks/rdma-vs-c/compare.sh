#!/bin/bash
# compare.sh - the Java starter against C, over real RDMA (soft-RoCE), in ONE VM run:
# builds the sample app's jar (Maven) and the C programs (build.sh) on the host, boots the
# soft-RoCE VM once (tools/rxe-vm/rxe-vm.sh), runs compare-in-vm.sh inside (both servers,
# alternating rounds), and prints the table with the Java/C ratios and the targets
# (summarize.sh). Extra arguments go to rxe-vm.sh (e.g. -t 1500 -c 2). The compare-in-vm.sh
# variables (ROUNDS, PINGPONG_ROUNDS, ADDR, ...) are taken from the environment.
#
#   benchmarks/rdma-vs-c/compare.sh                 # 6-15 min: build, VM boot, 10 rounds
#   SKIP_BUILD=1 ROUNDS=5 benchmarks/rdma-vs-c/compare.sh -t 1500
#   ADDR=198.18.3.2 benchmarks/rdma-vs-c/compare.sh # veth topology (client through rxeA)
#
# Output: target/compare-results.txt (raw lines), target/compare-table.md (the table),
# target/compare-java.log (the sample app's log). Exit code: rxe-vm.sh's if the VM run failed,
# else summarize.sh's (0 all targets met, 1 a target missed).
#
#   benchmarks/rdma-vs-c/compare.sh client [rxe-vm.sh arguments]
# compares the clients instead: the Java load client (rpma-benchmarks' PingPongLoadClient on
# RpmaClient, in target/benchmarks.jar) against load_client, both against one C server
# (client-compare-in-vm.sh, its variables from the environment; client-summarize.sh). Output:
# target/client-compare-results.txt, target/client-compare-table.md.
#
#   benchmarks/rdma-vs-c/compare.sh write [rxe-vm.sh arguments]
# compares the bandwidth of writes plus flushes instead: rpma-benchmarks' WriteLoadClient against
# load_client write, both against the sample app's flush endpoint (write-compare-in-vm.sh,
# write-summarize.sh). Output: target/write-compare-results.txt, target/write-compare-table.md.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
# what is compared: the servers (prefix "") or the clients ("client-"): the in-VM script, the
# summarizer and the output files carry the prefix
KIND=
case "${1:-}" in client|write) KIND=$1-; shift;; esac
MODULE=sample-app
[ "$KIND" = client- ] && MODULE=rpma-benchmarks
[ "$KIND" = write- ] && MODULE=sample-app,rpma-benchmarks
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  # tests are compiled but not run: the comparison needs the jar only
  (cd "$ROOT" && mvn -B -q ${MVN_ARGS:-} -DskipTests -pl "$MODULE" -am package)
  "$HERE/build.sh"
fi
mkdir -p "$HERE/target"
RESULTS=$HERE/target/${KIND}compare-results.txt
rm -f "$RESULTS"
# the VM reads the host's files as they are: a copy, so that a rebuild during the run cannot change the jar
if [ -n "$KIND" ]; then
  if [ "$KIND" = write- ] && [ -z "${SAMPLE_JAR:-}" ]; then
    cp "$(ls "$ROOT"/sample-app/target/sample-app-*.jar | grep -v -- '-plain\.jar$' | head -1)" "$HERE/target/sample-app.jar"
    export SAMPLE_JAR=$HERE/target/sample-app.jar
  fi
  if [ -z "${CLIENT_JAR:-}" ]; then
    cp "$ROOT/rpma-benchmarks/target/benchmarks.jar" "$HERE/target/benchmarks.jar"
    export CLIENT_JAR=$HERE/target/benchmarks.jar
  fi
elif [ -z "${SAMPLE_JAR:-}" ]; then
  cp "$(ls "$ROOT"/sample-app/target/sample-app-*.jar | grep -v -- '-plain\.jar$' | head -1)" "$HERE/target/sample-app.jar"
  export SAMPLE_JAR=$HERE/target/sample-app.jar
fi
echo "== host: $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
set +e
"$ROOT/tools/rxe-vm/rxe-vm.sh" -t 2400 "$@" -w "$HERE/target" -- "$HERE/${KIND}compare-in-vm.sh"
rc=$?
echo "== host load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -s "$RESULTS" ] || { echo "compare.sh: the VM run left no results (rxe-vm.sh exit $rc)" >&2; exit $(( rc ? rc : 2 )); }
echo
"$HERE/${KIND}summarize.sh" "$RESULTS" | tee "$HERE/target/${KIND}compare-table.md"
src=${PIPESTATUS[0]}
[ $rc = 0 ] || { echo "compare.sh: the VM run failed (exit $rc)" >&2; exit $rc; }
exit "$src"
