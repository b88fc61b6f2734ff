#!/bin/bash
# srq.sh - slots per connection against one shared receive queue, both in C, in ONE VM run:
# builds the C programs, boots the soft-RoCE VM (tools/rxe-vm/rxe-vm.sh), runs srq-in-vm.sh
# inside and prints srq-summarize.sh's table. Extra arguments go to rxe-vm.sh; srq-in-vm.sh's
# variables (ROUNDS, SRQ_SLOTS, ...) come from the environment. About 15 minutes.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
"$HERE/build.sh"
rm -f "$HERE/target/srq-results.txt"
"$ROOT/tools/rxe-vm/rxe-vm.sh" -t 1800 "$@" -w "$HERE/target" -- "$HERE/srq-in-vm.sh"
"$HERE/srq-summarize.sh" "$HERE/target/srq-results.txt"
