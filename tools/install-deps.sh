#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need (run as root; idempotent).
# librpma0: the library itself; librpma-dev + libibverbs-dev: the header, for the layout probe the
# tests compile (librpma-dev forgets to depend on libibverbs-dev); gcc: that probe, the C baseline and
# rpma-jna's JNI data path (compiled by the build against the JDK's jni.h).
set -euo pipefail
# libpmem1: a device DAX region's mapping and cache write-back (rpma-jna's PmemMapping); ndctl: the
# device DAX the persistent-memory end-to-end test makes in the VM (tools/e2e/run-pmem-e2e.sh)
packages=(librpma0 librpma-dev libibverbs-dev gcc maven openjdk-17-jdk-headless libpmem1 ndctl)
# ---- containers: the container end-to-end tests (RPMA_E2E_CONTAINERS=1, docs/containers.md) build
# their images with docker, FROM scratch from this machine's files: the JDK's jmods, librpma0 and the
# verbs providers (which libibverbs only recommends)
if [ "${RPMA_E2E_CONTAINERS:-0}" = 1 ]; then packages+=(docker.io ibverbs-providers); fi
# ---- end containers
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
