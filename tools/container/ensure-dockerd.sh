#!/usr/bin/env bash
# ensure-dockerd.sh - make sure a docker daemon answers on this machine: install Debian's docker.io
# when it is missing and start dockerd in the background when none runs (machines without systemd,
# such as CI containers). The daemon runs without a bridge or iptables rules (images are built with
# the host's network); its log is /var/log/rpma-dockerd.log. Run as root.
set -euo pipefail
DOCKER=/usr/bin/docker
if [ ! -x /usr/sbin/dockerd ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io >&2; }
fi
$DOCKER info >/dev/null 2>&1 && exit 0
echo "ensure-dockerd: starting dockerd (log: /var/log/rpma-dockerd.log)" >&2
# without the caller's descriptors: a daemon that inherited a lock (flock) would hold it for ever
(
  for fd in /proc/self/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  exec nohup /usr/sbin/dockerd --iptables=false --ip-masq=false --bridge=none </dev/null >/var/log/rpma-dockerd.log 2>&1
) &
for _ in $(seq 120); do $DOCKER info >/dev/null 2>&1 && exit 0; sleep 0.5; done
echo "ensure-dockerd: dockerd did not answer within 60 s:" >&2
tail -20 /var/log/rpma-dockerd.log >&2
exit 1
