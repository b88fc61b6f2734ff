#!/usr/bin/env bash
# rdma-address.sh - prints the IPv4 address of the first netdev an RDMA device sits on (hardware
# RDMA NICs through /sys/class/infiniband/*/device/net, soft-RoCE devices through `rdma link
# show`); exit code 1 when there is none.
set -uo pipefail
nets=()
for d in /sys/class/infiniband/*/device/net/*; do
  [ -e "$d" ] && nets+=("$(basename "$d")")
done
# awk reads all of its input: an early exit would SIGPIPE the writer, fatal under pipefail
while read -r n; do nets+=("$n"); done < <(rdma link show 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "netdev") print $(i + 1)}')
for n in "${nets[@]}"; do
  address=$(ip -4 -o addr show dev "$n" 2>/dev/null | awk 'NR == 1 {split($4, a, "/"); print a[1]}')
  if [ -n "$address" ]; then
    echo "$address"
    exit 0
  fi
done
exit 1
