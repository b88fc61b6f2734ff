#!/bin/bash
# build-c-clients.sh - build the end-to-end tests' C programs, clients and servers
# (sample-app/src/test/c/*.c, one program per file) into sample-app/target/c-clients/
# (git-ignored) and print their paths.
# Needs gcc, librpma-dev and libibverbs-dev (installed with apt-get when missing and root).
#
#   tools/e2e/build-c-clients.sh
#
# The programs: hello_client, read_client, pingpong_client (wire-compatible with librpma's
# examples 01, 02 and 08), conn_holder (many idle connections), bad_client (malformed
# messages), reject_flood (requests the server rejects, in a loop), persist_client (examples 04
# and 05, and random writes read back after a restart), read_to_persistent_client (example 03:
# the server reads the client's memory); hello_server, read_server,
# pingpong_server (wire-compatible with librpma's example servers 01, 02 and 08, for the Java
# client). Each file's header comment gives its usage, output and exit codes.
set -euo pipefail
ROOT=$(cd "$(dirname "$(realpath "$0")")/../.." && pwd)
SRC=$ROOT/sample-app/src/test/c
OUT=$ROOT/sample-app/target/c-clients
. "$ROOT/tools/c/build-lib.sh"
c_build_deps build-c-clients.sh
for prog in hello_client read_client pingpong_client conn_holder bad_client reject_flood persist_client \
    read_to_persistent_client hello_server read_server pingpong_server; do
  c_build "$SRC" "$OUT" "$prog"
  echo "$OUT/$prog"
done
