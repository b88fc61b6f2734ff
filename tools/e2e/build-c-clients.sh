#!/bin/bash
# build-c-clients.sh - build the end-to-end tests' C clients (sample-app/src/test/c/*.c, one
# program per file) into sample-app/target/c-clients/ (git-ignored) and print their paths.
# Needs gcc, librpma-dev and libibverbs-dev (installed with apt-get when missing and root).
#
#   tools/e2e/build-c-clients.sh
#
# The programs: hello_client, read_client, pingpong_client (wire-compatible with librpma's
# examples 01, 02 and 08), conn_holder (many idle connections), bad_client (malformed
# messages); each file's header comment gives its usage, output and exit codes.
set -euo pipefail
ROOT=$(cd "$(dirname "$(realpath "$0")")/../.." && pwd)
SRC=$ROOT/sample-app/src/test/c
OUT=$ROOT/sample-app/target/c-clients
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
[ -f /usr/include/librpma.h ] || need+=(librpma-dev)
[ -f /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)   # librpma-dev does not depend on it
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "build-c-clients.sh: please install ${need[*]}" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
fi
mkdir -p "$OUT"
CFLAGS=(-O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread)
for prog in hello_client read_client pingpong_client conn_holder bad_client; do
  gcc "${CFLAGS[@]}" -o "$OUT/$prog" "$SRC/$prog.c" -lrpma -libverbs -lpthread
  echo "$OUT/$prog"
done
