#!/bin/bash
# build.sh - build the C baseline server and the load client into target/ (git-ignored).
# Needs gcc, librpma-dev and libibverbs-dev (installed with apt-get when missing and root).
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
OUT=$HERE/target
. "$HERE/../../tools/c/build-lib.sh"
c_build_deps build.sh
for prog in baseline_server load_client; do
  c_build "$HERE/src" "$OUT" "$prog"
done
echo "build.sh: built $OUT/baseline_server $OUT/load_client" >&2
