#!/bin/sh
# has-rdma-device.sh - exit 0 if this machine (host or VM) has at least one RDMA
# device (/sys/class/infiniband/* exists), 1 otherwise. With -v, print the names.
# Callers use it to choose between running real-RDMA work directly and running it
# in the soft-RoCE VM (rxe-vm.sh / run-java-tests.sh --mode auto).
#   if tools/rxe-vm/has-rdma-device.sh; then ...direct...; else tools/rxe-vm/rxe-vm.sh ...; fi
found=1
for d in /sys/class/infiniband/*; do
  [ -e "$d" ] || continue
  found=0
  [ "${1:-}" = -v ] && echo "${d##*/}"
done
exit $found
