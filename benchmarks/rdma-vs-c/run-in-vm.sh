#!/bin/bash
# run-in-vm.sh - build the C baseline on the host, then run vm-bench.sh inside ONE
# soft-RoCE VM boot (tools/rxe-vm/rxe-vm.sh). Extra arguments are passed to rxe-vm.sh
# before the command (e.g. -t 900 -c 2); the vm-bench.sh variables (HELLO_CYCLES,
# PINGPONG_ROUNDS, SERVERS, REPEAT, ...) are taken from the environment. The host's
# load average is printed before and after: the VM is emulated, so anything else
# running on the host shows up in the numbers. Exit code: vm-bench.sh's.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
"$HERE/build.sh"
echo "== host: $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
set +e
"$ROOT/tools/rxe-vm/rxe-vm.sh" -t 600 "$@" -w "$HERE/target" -- "$HERE/vm-bench.sh"
rc=$?
echo "== host load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
