#!/usr/bin/env bash
# build-images.sh - build the project's container images locally, with no registry: a Debian base
# made with debootstrap and `docker import`, then the images below on top of it or FROM scratch.
#
#   tools/container/build-images.sh [--no-build] [--save DIR] [IMAGE...]
#
# IMAGE (default: all of them):
#   sample-app   rpma/sample-app         the sample app's runnable jar on Debian's JRE 17 and librpma0
#   c-clients    rpma/c-clients          FROM scratch: the C test clients (sample-app/src/test/c), the
#                                        libraries they load and the verbs providers
#   prometheus   rpma/prometheus         FROM scratch: Debian's prometheus binary and its libraries
#   (the base, rpma/debian-bookworm-minbase, is made when sample-app needs it)
#
#   --no-build   use the jar and C clients already built (else: mvn package and build-c-clients.sh)
#   --save DIR   also `docker save` each image to DIR/<image>.tar (to load it elsewhere, e.g. the VM)
#
# Needs root (apt-get, debootstrap) and a running dockerd (`dockerd &` where there is no systemd).
# The base's root file system is cached as RPMA_CONTAINER_CACHE/debian-bookworm-minbase.tar
# (default /var/cache/rpma-containers), Debian's prometheus package unpacked beside it; delete the
# cache to rebuild from Debian's archive. Prints each image's size and build time.
set -euo pipefail
cd "$(dirname "$(realpath "$0")")/../.."
ROOT=$PWD
HERE=$ROOT/tools/container
CACHE=${RPMA_CONTAINER_CACHE:-/var/cache/rpma-containers}
BUILD=1
SAVE=
IMAGES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift;;
    --save) SAVE=$(realpath -m "$2"); shift 2;;
    -h|--help) sed -n '2,22p' "$0"; exit 0;;
    sample-app|c-clients|prometheus) IMAGES+=("$1"); shift;;
    *) echo "build-images: unknown argument $1" >&2; exit 2;;
  esac
done
[ ${#IMAGES[@]} -gt 0 ] || IMAGES=(sample-app c-clients prometheus)
die() { echo "build-images: $*" >&2; exit 1; }
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=$(command -v docker) || die "no docker: apt-get install docker.io"
$DOCKER info >/dev/null 2>&1 || die "no docker daemon answers: start one (dockerd &, as root)"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"; flock 9
# the host's own Debian mirror, as tools/rxe-vm does
. /etc/os-release
MIRROR=$(awk -v c="${VERSION_CODENAME:-bookworm}" '/^URIs:/{u=$2} /^Suites:/{for(i=2;i<=NF;i++) if($i==c){print u; exit}}' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$MIRROR" ] || MIRROR=$(awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

now() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(now)-$1}"; }
report() { # image start [nosave]
  local size
  size=$($DOCKER image inspect -f '{{.Size}}' "$1")
  echo "build-images: $1: $(awk "BEGIN{printf \"%.1f\", $size/1e6}") MB, built in $(since "$2") s" >&2
  if [ -n "$SAVE" ] && [ -z "${3:-}" ]; then
    mkdir -p "$SAVE"
    local t; t=$(now)
    $DOCKER save -o "$SAVE/${1#rpma/}.tar" "$1"
    echo "build-images: $1 saved to $SAVE/${1#rpma/}.tar in $(since "$t") s" >&2
  fi
}

# ------------------------------------------------------------------ base: debootstrap + docker import
BASE=rpma/debian-bookworm-minbase
base_image() {
  local t tar=$CACHE/debian-bookworm-minbase.tar
  t=$(now)
  if [ ! -s "$tar" ]; then
    command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
    local dir; dir=$(mktemp -d "$CACHE/rootfs.XXXXXX")
    echo "build-images: debootstrap --variant=minbase bookworm from $MIRROR" >&2
    debootstrap --variant=minbase bookworm "$dir" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
      || { tail -20 "$CACHE/debootstrap.log" >&2; rm -rf "$dir"; die "debootstrap failed"; }
    # no documentation or translations in any image; the man directories stay, since the JRE's
    # alternatives point into them
    cat > "$dir/etc/dpkg/dpkg.cfg.d/01-rpma-slim" <<'SLIM'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/info/*
SLIM
    chroot "$dir" apt-get clean
    rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/var/log/* "$dir"/usr/share/info/* \
      "$dir"/usr/share/locale/* "$dir"/usr/share/man/*/* "$dir"/tmp/*
    find "$dir"/usr/share/doc -mindepth 2 ! -name copyright -delete 2>/dev/null || true
    tar --numeric-owner -C "$dir" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
    rm -rf "$dir"
  fi
  if ! $DOCKER image inspect "$BASE" >/dev/null 2>&1; then
    $DOCKER import "$tar" "$BASE" >/dev/null
  fi
  # not saved: the app's image carries its layers
  report "$BASE" "$t" nosave
}

# ------------------------------------------------------------------ FROM scratch: files and their libraries
# libraries DIR FILE...: copy every library the FILEs load (ldd) into DIR, at their own paths
libraries() {
  local dir=$1; shift
  local f lib
  for f in "$@"; do
    for lib in $(ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^[[:space:]]*\/.*ld-linux/{print $1}'); do
      [ -e "$dir$lib" ] || cp -L --parents "$lib" "$dir/"
    done
  done
}

c_clients_image() {
  local t; t=$(now)
  [ $BUILD = 0 ] || bash tools/e2e/build-c-clients.sh >/dev/null
  local bin=$ROOT/sample-app/target/c-clients
  [ -x "$bin/pingpong_client" ] || die "no C clients in $bin: run tools/e2e/build-c-clients.sh"
  local ctx; ctx=$(mktemp -d); mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/tmp"
  cp "$bin"/{hello_client,read_client,pingpong_client,conn_holder,bad_client} "$ctx/rootfs/usr/local/bin/"
  libraries "$ctx/rootfs" "$ctx"/rootfs/usr/local/bin/*
  # the verbs providers libibverbs opens by name at run time (not seen by ldd), and their list
  local provider_dir; provider_dir=$(dirname "$(ls /usr/lib/*/libibverbs/librxe-rdmav*.so | head -1)")
  cp -L --parents "$provider_dir"/*.so "$ctx/rootfs/"
  libraries "$ctx/rootfs" "$provider_dir"/*.so
  cp -L --parents /etc/libibverbs.d/*.driver "$ctx/rootfs/"
  cp "$HERE/c-clients/Dockerfile" "$ctx/"
  $DOCKER build -q -t rpma/c-clients "$ctx" >/dev/null
  rm -rf "$ctx"
  report rpma/c-clients "$t"
}

prometheus_image() {
  local t; t=$(now)
  local pdir=$CACHE/prometheus
  if [ ! -x "$pdir/usr/bin/prometheus" ]; then
    # the package only, unpacked: installing it would bring 449 MB of dependencies
    local d; d=$(mktemp -d); chmod 755 "$d"
    ( cd "$d" && apt-get download -o APT::Sandbox::User=root prometheus >&2 ) \
      || { apt-get update -q >&2; ( cd "$d" && apt-get download -o APT::Sandbox::User=root prometheus >&2 ); } \
      || die "apt-get download prometheus failed"
    rm -rf "$pdir"; mkdir -p "$pdir"; dpkg-deb -x "$d"/prometheus_*.deb "$pdir"; rm -rf "$d"
  fi
  local ctx; ctx=$(mktemp -d); mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/prometheus" "$ctx/rootfs/etc/prometheus" "$ctx/rootfs/tmp"
  cp "$pdir/usr/bin/prometheus" "$ctx/rootfs/bin/prometheus"
  libraries "$ctx/rootfs" "$ctx/rootfs/bin/prometheus"
  cp "$HERE/prometheus/Dockerfile" "$HERE/prometheus/prometheus.yml" "$ctx/"
  $DOCKER build -q -t rpma/prometheus "$ctx" >/dev/null
  rm -rf "$ctx"
  report rpma/prometheus "$t"
}

sample_app_image() {
  base_image
  local t; t=$(now)
  if [ $BUILD = 1 ]; then
    mvn -B -q -Dstyle.color=never package -pl sample-app -am -DskipTests >&2
  fi
  local jar; jar=$(ls "$ROOT"/sample-app/target/sample-app-*.jar 2>/dev/null | grep -v -- '-plain\.jar$' | head -1 || true)
  [ -n "$jar" ] || die "no runnable jar in sample-app/target: run without --no-build"
  local ctx; ctx=$(mktemp -d)
  cp "$jar" "$ctx/sample-app.jar"
  cp "$HERE/sample-app/Dockerfile" "$ctx/"
  # host networking for apt-get in the build: the daemon may run without a bridge (--bridge=none)
  $DOCKER build -q --network host -t rpma/sample-app "$ctx" >/dev/null
  rm -rf "$ctx"
  report rpma/sample-app "$t"
}

for image in "${IMAGES[@]}"; do
  case "$image" in
    sample-app) sample_app_image;;
    c-clients) c_clients_image;;
    prometheus) prometheus_image;;
  esac
done
