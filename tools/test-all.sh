#!/usr/bin/env bash
# Runs every test: the unit tests against the scripted fake and the loopback, the tests against the
# real librpma (no device needed), pitest on the acceptor and the native handles, a new user's project built with
# librpma hidden, then the end-to-end tests over real soft-RoCE with the soak's short run (directly
# when this machine has an RDMA device, else inside the project's VM), with the container end-to-end
# tests in the same VM boot (docs/containers.md; RPMA_E2E_CONTAINERS=0 leaves them out).
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
# the acceptor's request lifecycle, the connection registry and the native handles' state word under
# mutation (about 3.5 minutes; docs/testing.md#mutation-testing)
step pitest mvn -B -P mutation -pl rpma-jna,rpma-server verify
step new-user bash tools/new-user/check.sh
if [ -x tools/e2e/run-e2e.sh ]; then
  # with the soak's short run (1.5 minutes of mixed traffic, every series flat; tools/e2e/soak.sh runs 20)
  # --no-maven: the jar and the test classes of the install above
  step end-to-end bash tools/e2e/run-e2e.sh --no-maven -Drpma.e2e.soak.minutes=1.5
fi
echo "test-all: passed in $(( $(date +%s) - began )) s"
printf '  %s\n' "${TIMES[@]}"
