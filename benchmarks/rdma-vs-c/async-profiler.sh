#!/bin/bash
# async-profiler.sh - on the host: fetches async-profiler (tools.profiler:async-profiler, from Maven
# Central) and unpacks its Linux x64 agent into target/async-profiler/, for client-perf-in-vm.sh's
# TOOLS=asprof (the VM has no network; it reads the host's files). Prints the agent's path.
#
#   benchmarks/rdma-vs-c/async-profiler.sh
#
# Environment: ASYNC_PROFILER_VERSION [4.1]
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
VERSION=${ASYNC_PROFILER_VERSION:-4.1}
DEST=$HERE/target/async-profiler
mkdir -p "$DEST"
if [ ! -s "$DEST/libasyncProfiler.so" ]; then
  mvn -B -q dependency:copy -Dartifact="tools.profiler:async-profiler:$VERSION" -DoutputDirectory="$DEST"
  unzip -o -q -j "$DEST/async-profiler-$VERSION.jar" linux-x64/libasyncProfiler.so -d "$DEST"
fi
echo "$DEST/libasyncProfiler.so"
