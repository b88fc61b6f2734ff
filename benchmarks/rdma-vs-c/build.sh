#!/bin/bash
# build.sh - build the C baseline server and the load client into target/ (git-ignored).
# Needs gcc, librpma-dev and libibverbs-dev (installed with apt-get when missing and root).
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
OUT=$HERE/target
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
[ -f /usr/include/librpma.h ] || need+=(librpma-dev)
[ -f /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)   # librpma-dev does not depend on it
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "build.sh: please install ${need[*]}" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
fi
mkdir -p "$OUT"
CFLAGS=(-O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread)
for prog in baseline_server load_client; do
  gcc "${CFLAGS[@]}" -o "$OUT/$prog" "$HERE/src/$prog.c" -lrpma -libverbs -lpthread
done
echo "build.sh: built $OUT/baseline_server $OUT/load_client" >&2
