#!/usr/bin/env bash
# in-vm-docker.sh - start a docker daemon inside the soft-RoCE VM, load the images saved on the
# host, then run COMMAND (exec) with Testcontainers set up for this daemon. Used by run-e2e.sh
# --containers through run-java-tests.sh --wrapper.
#
#   in-vm-docker.sh IMAGES_DIR LOG_DIR -- COMMAND [ARG...]
#
# The VM's root is an overlay on 9p, which overlay2 cannot use as its data root: the data root is a
# tmpfs (boot the VM with -m 6144). No bridge and no iptables: the containers use the host network,
# the only one in which soft-RoCE works. The daemon's log goes to LOG_DIR/dockerd.log.
set -euo pipefail
IMAGES=$1 LOGS=$2; shift 2
[ "${1:-}" = -- ] && shift
start=$(date +%s.%N)
since() { awk "BEGIN{printf \"%.1f\", $(date +%s.%N)-$start}"; }
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
mkdir -p /var/lib/docker && mount -t tmpfs -o mode=711 tmpfs /var/lib/docker
dockerd --iptables=false --ip-masq=false --bridge=none --data-root /var/lib/docker \
  > "$LOGS/dockerd.log" 2>&1 &
for _ in $(seq 240); do /usr/bin/docker info >/dev/null 2>&1 && break; sleep 0.5; done
/usr/bin/docker info >/dev/null 2>&1 || { echo "in-vm-docker: dockerd did not start:" >&2; tail -20 "$LOGS/dockerd.log" >&2; exit 125; }
echo "in-vm-docker: dockerd ready after $(since) s" >&2
for image in "$IMAGES"/*.tar; do
  /usr/bin/docker load -q -i "$image" >&2
done
echo "in-vm-docker: images loaded after $(since) s: $(du -cm "$IMAGES"/*.tar | tail -1 | cut -f1) MB" >&2
# Ryuk's image cannot be pulled here; the marker file Docker leaves at the root of the host makes
# Testcontainers think it runs in a container and look for a gateway (with an image it cannot pull)
export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=localhost
export DOCKER_HOST=unix:///var/run/docker.sock
exec "$@"
