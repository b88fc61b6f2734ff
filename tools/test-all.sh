#!/usr/bin/env bash
# Runs every test: the unit tests against the scripted fake and the loopback, the tests against the
# real librpma (no device needed), a new user's project built with librpma hidden, then the
# end-to-end tests over real soft-RoCE with the soak's short run (directly when this machine has an
# RDMA device, else inside the project's VM), with the container end-to-end tests in the same VM boot
# (docs/containers.md; RPMA_E2E_CONTAINERS=0 leaves them out), and beside them pitest on the acceptor
# and the native handles. Prints each step's wall time at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# install-deps.sh then installs docker.io, and run-e2e.sh builds the images and adds the tests
export RPMA_E2E_CONTAINERS=${RPMA_E2E_CONTAINERS:-1}
began=$(date +%s)
TIMES=()
# runs a step and keeps its wall time for the summary at the end
step() {
  local name=$1 from
  shift
  from=$(date +%s)
  "$@"
  TIMES+=("$name: $(( $(date +%s) - from )) s")
}
step install-deps bash tools/install-deps.sh
# install: the new user's project below builds against these artifacts
step "build and unit tests" mvn -B install
step new-user bash tools/new-user/check.sh

# pitest: the acceptor's request lifecycle, the connection registry and the native handles' state word
# under mutation (docs/testing.md#mutation-testing). It runs beside the end-to-end tests at the lowest
# priority, in a process group of its own: alone it takes both CPUs for about 3.5 minutes, and the
# soft-RoCE VM leaves a third of them idle while its tests wait. Its goal only, after test-compile:
# the lifecycle's package phase would rewrite jars the end-to-end tests are reading.
mkdir -p target
PITEST_LOG=$PWD/target/pitest.log
pitest_began=$(date +%s)
# With the CPU only when the VM leaves it, its timeout and the harness's waits are three times the
# usual (rpma-server/pom.xml), so that an answer that comes late is not taken for a mutant killed.
setsid nice -n 19 mvn -B -P mutation -pl rpma-jna,rpma-server -Dpitest.timeout-millis=6000 -Dpitest.wait-millis=3000 \
  -Dpitest.shutdown-millis=1500 test-compile org.pitest:pitest-maven:mutationCoverage >"$PITEST_LOG" 2>&1 &
PITEST=$!
trap 'kill -- -$PITEST 2>/dev/null || true' EXIT
if [ -x tools/e2e/run-e2e.sh ]; then
  # with the soak's short run (1.5 minutes of mixed traffic, every series flat; tools/e2e/soak.sh runs 20);
  # --no-maven: the jar and the test classes of the install above
  step end-to-end bash tools/e2e/run-e2e.sh --no-maven -Drpma.e2e.soak.minutes=1.5
fi
pitest_rc=0
wait $PITEST || pitest_rc=$?
trap - EXIT
TIMES+=("pitest (beside the end-to-end tests): $(( $(date +%s) - pitest_began )) s")
echo "----- pitest ($PITEST_LOG) -----"
grep -E '^>> (Generated|Line Coverage|Ran)|mutation score|BUILD|ERROR' "$PITEST_LOG" || true
[ $pitest_rc = 0 ] || { tail -60 "$PITEST_LOG"; echo "test-all: pitest failed (exit $pitest_rc)" >&2; exit $pitest_rc; }
echo "test-all: passed in $(( $(date +%s) - began )) s"
printf '  %s\n' "${TIMES[@]}"
