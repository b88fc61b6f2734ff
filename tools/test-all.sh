#!/usr/bin/env bash
# Runs every test: the unit tests against the scripted fake, the tests against the real librpma
# (no device needed), then the end-to-end tests over real soft-RoCE (directly when this machine has
# an RDMA device, else inside the project's VM). RPMA_E2E_CONTAINERS=1 adds the container end-to-end
# tests to that VM boot (docs/containers.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
mvn -B verify
if [ -x tools/e2e/run-e2e.sh ]; then
  bash tools/e2e/run-e2e.sh
fi
