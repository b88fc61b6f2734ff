#!/bin/bash
# srq.sh - slots per connection against one shared receive queue, in ONE VM run: builds the C
# programs (and, with IMPL=java, the sample app's jar), boots the soft-RoCE VM
# (tools/rxe-vm/rxe-vm.sh), runs srq-in-vm.sh inside and prints srq-summarize.sh's table.
# IMPL=c (default) compares two C servers, IMPL=java two JVMs of the sample app. Extra arguments go
# to rxe-vm.sh; srq-in-vm.sh's variables (ROUNDS, SRQ_SLOTS, ...) come from the environment. About
# 5 minutes in C, 15 in Java; SKIP_BUILD=1 skips the builds.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
IMPL=${IMPL:-c}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  "$HERE/build.sh"
  if [ "$IMPL" = java ]; then
    (cd "$ROOT" && mvn -B -q -DskipTests -pl sample-app -am package)
  fi
fi
rm -f "$HERE/target/srq-results-$IMPL.txt"
IMPL=$IMPL "$ROOT/tools/rxe-vm/rxe-vm.sh" -t 2400 "$@" -w "$HERE/target" -- "$HERE/srq-in-vm.sh"
"$HERE/srq-summarize.sh" "$HERE/target/srq-results-$IMPL.txt"
