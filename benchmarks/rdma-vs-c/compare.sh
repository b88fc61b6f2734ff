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
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  # tests are compiled but not run: the comparison needs the jar only
  (cd "$ROOT" && mvn -B -q ${MVN_ARGS:-} -DskipTests -pl sample-app -am package)
  "$HERE/build.sh"
fi
mkdir -p "$HERE/target"
rm -f "$HERE/target/compare-results.txt"
# the VM reads the host's files as they are: a copy, so that a rebuild during the run cannot change the jar
if [ -z "${SAMPLE_JAR:-}" ]; then
  cp "$(ls "$ROOT"/sample-app/target/sample-app-*.jar | grep -v -- '-plain\.jar$' | head -1)" "$HERE/target/sample-app.jar"
  export SAMPLE_JAR=$HERE/target/sample-app.jar
fi
echo "== host: $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
set +e
"$ROOT/tools/rxe-vm/rxe-vm.sh" -t 2400 "$@" -w "$HERE/target" -- "$HERE/compare-in-vm.sh"
rc=$?
echo "== host load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -s "$HERE/target/compare-results.txt" ] || { echo "compare.sh: the VM run left no results (rxe-vm.sh exit $rc)" >&2; exit $(( rc ? rc : 2 )); }
echo
"$HERE/summarize.sh" "$HERE/target/compare-results.txt" | tee "$HERE/target/compare-table.md"
src=${PIPESTATUS[0]}
[ $rc = 0 ] || { echo "compare.sh: the VM run failed (exit $rc)" >&2; exit $rc; }
exit "$src"
