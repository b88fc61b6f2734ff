#!/bin/bash
# rxe-vm.sh - run one command inside a throw-away QEMU VM whose kernel has
# soft-RoCE (rdma_rxe) configured, and return the command's output and exit code.
# rpma-spring-boot's own copy of the shared soft-RoCE recipe (see README.md here).
#
#   rxe-vm.sh [options] [--] COMMAND [ARG...]
#   rxe-vm.sh --has-rdma       exit 0 iff THIS machine already has an RDMA device
#   rxe-vm.sh --prepare        only install/download/cache, do not boot
#
# The VM boots Debian's stock 6.1 kernel (package linux-image-amd64, unpacked
# into a cache dir, never installed on the host).  Its root file system is the
# HOST's "/" exported read-only over virtio-9p with a tmpfs overlay on top, so
# everything installed on the host (JDK, ~/.m2, librpma, rdma-core, the project
# tree) is visible inside at the same paths; writes go to RAM and vanish, except
# in directories given with -w, which are shared read-write.
#
# Inside the VM, before COMMAND runs:
#   * rdma_rxe, ib_uverbs, rdma_ucm are loaded
#   * dummy netdev "rxenet0" with 198.18.0.1/24 (RFC 2544 benchmark range),
#     soft-RoCE device "rxe0" on top of it: client and server both use
#     198.18.0.1 (rxe's internal loopback path, no packet on any wire)
#   * veth pair vethA(198.18.3.1) <-> vethB(198.18.3.2) with soft-RoCE devices
#     rxeA / rxeB: a server on 198.18.3.2 and a client connecting to it talk
#     rxeA -> wire -> rxeB, like two hosts (both ends stay in this VM)
#   * RPMA_TEST_SAME_IP=198.18.0.1 RPMA_TEST_SERVER_IP=198.18.3.2
#     RPMA_TEST_CLIENT_IP=198.18.3.1 RXE_VM=1 are exported (tests read them)
#   * ulimit -l unlimited, cwd = the host cwd (or -C DIR), host env exported,
#     stdin is /dev/null; stdout+stderr are streamed back (merged) as they come
# The VM has NO network device at all (-nic none): nothing can leave it.
#
# Options:
#   -m MiB      guest memory (default 4096)
#   -c N        guest vCPUs (default: number of host CPUs)
#   -t SEC      wall-clock limit for the whole VM (default 1800); exit 124 on timeout
#   -w DIR      share host DIR read-write at the same path (repeatable)
#   -C DIR      working directory for COMMAND (default: current directory)
#   -k          keep the run directory (console log, output) for debugging
#   -p          emulated persistent memory: the kernel gets memmap=256M!2G, and
#               /dev/pmem0 (ext4, 4 KiB blocks) is mounted with -o dax on
#               /mnt/pm before COMMAND runs; RXE_VM_PMEM=/mnt/pm is exported.
#               Survives a process kill, not a VM power loss (see README.md)
#   -v          print the guest kernel console log after the run
#   --prepare   only download/unpack kernel and build initramfs, then exit
#   --has-rdma  no VM: exit 0 if /sys/class/infiniband has a device, else 1
# Environment:
#   RXE_VM_CACHE  cache dir (default /var/cache/rxe-vm)
#   RXE_VM_ACCEL  tcg | kvm | auto (default auto = kvm only if kvm_intel/kvm_amd
#                 is loaded on the host, else tcg; PVM-style /dev/kvm cannot boot
#                 a stock kernel)
#   RXE_VM_KERNEL_PKG  kernel package (default: what linux-image-amd64 depends on)
#   RXE_VM_QEMU   auto | system | PATH (default auto).  auto: if the system
#                 qemu is older than 8 (bookworm ships 7.2), unpack qemu-system-x86
#                 from <codename>-backports into the cache (private apt state, the
#                 host's apt sources are not changed) and use it; falls back to the
#                 system qemu.  QEMU 7.2's multi-threaded TCG crashed the JVM's JIT
#                 code in most runs, so with 7.2 the default is one TCG thread.
#   RXE_VM_TCG_THREAD  multi | single (default: multi with qemu>=8, single with 7.2)
#   RXE_VM_CPU    -cpu model (default max for tcg, host for kvm)
#   RXE_VM_APPEND more guest kernel arguments, e.g. "clocksource=tsc tsc=reliable":
#                 under TCG the kernel finds the TSCs unsynchronized and reads
#                 the emulated HPET instead, which has no vDSO reader, so every
#                 clock read is a system call of microseconds
# Exit code: COMMAND's exit code; 124 timeout; 125 VM/setup failure.
set -euo pipefail

CACHE=${RXE_VM_CACHE:-/var/cache/rxe-vm}
MEM=4096
CPUS=$(nproc)
TIMEOUT=1800
RW_DIRS=()
WORKDIR=$PWD
KEEP=0
VERBOSE=0
PMEM=0
PREPARE_ONLY=0

die() { echo "rxe-vm: $*" >&2; exit 125; }

while [ $# -gt 0 ]; do
  case "$1" in
    -m) MEM=$2; shift 2;;
    -c) CPUS=$2; shift 2;;
    -t) TIMEOUT=$2; shift 2;;
    -w) RW_DIRS+=("$(realpath "$2")"); shift 2;;
    -C) WORKDIR=$(realpath "$2"); shift 2;;
    -k) KEEP=1; shift;;
    -p) PMEM=1; shift;;
    -v) VERBOSE=1; shift;;
    --prepare) PREPARE_ONLY=1; shift;;
    --has-rdma) exec "$(dirname "$(realpath "$0")")/has-rdma-device.sh";;
    --) shift; break;;
    -*) die "unknown option $1";;
    *) break;;
  esac
done
[ $PREPARE_ONLY = 1 ] || [ $# -gt 0 ] || die "usage: rxe-vm.sh [-m MiB] [-c N] [-t SEC] [-w DIR]... [-C DIR] [-k] [-v] [--] COMMAND [ARG...]"
[ "$(id -u)" = 0 ] || die "must run as root (9p export of / and module handling)"

# one preparer at a time (apt, cache); released before the VM boots
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

# ---------------------------------------------------------------- host packages
need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' || need_pkgs+=(busybox-static)
command -v depmod >/dev/null || need_pkgs+=(kmod)
command -v cpio >/dev/null || need_pkgs+=(cpio)
command -v file >/dev/null || need_pkgs+=(file)
command -v rdma >/dev/null || need_pkgs+=(iproute2)
command -v ip >/dev/null || need_pkgs+=(iproute2)
ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 || need_pkgs+=(ibverbs-providers)
command -v rdma_server >/dev/null || need_pkgs+=(rdmacm-utils)   # also pulls librdmacm
command -v ibv_devices >/dev/null || need_pkgs+=(ibverbs-utils)
command -v xz >/dev/null || need_pkgs+=(xz-utils)        # in case the kernel's modules are .ko.xz
command -v zstd >/dev/null || need_pkgs+=(zstd)          # ... or .ko.zst
# the project's native library (runtime package only; tests load librpma.so.0)
ls /usr/lib/*/librpma.so.0 >/dev/null 2>&1 || need_pkgs+=(librpma0)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "rxe-vm: installing ${need_pkgs[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_pkgs[@]}" >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_pkgs[@]}" >&2; } \
    || die "apt-get install ${need_pkgs[*]} failed"
fi

# ---------------------------------------------------------------- kernel + initramfs (cached)
kpkg_from_apt() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
INITRD_VERSION=4   # bump when the /init below changes
KPKG=${RXE_VM_KERNEL_PKG:-$(kpkg_from_apt)}
[ -n "$KPKG" ] || { apt-get update -q >&2 || true; KPKG=$(kpkg_from_apt); }
[ -n "$KPKG" ] || die "cannot determine the kernel package (apt-cache depends linux-image-amd64)"
KVER=${KPKG#linux-image-}
if [ ! -f "$CACHE/$KVER/boot/vmlinuz-$KVER" ]; then
  echo "rxe-vm: fetching $KPKG" >&2
  tmpd=$(mktemp -d); chmod 755 "$tmpd"
  if ! ( cd "$tmpd" && apt-get download -o APT::Sandbox::User=root "$KPKG" >&2 ); then
    # stale package lists (the archive keeps only the newest kernel): refresh once and retry
    apt-get update -q >&2 || true
    [ -n "${RXE_VM_KERNEL_PKG:-}" ] || KPKG=$(kpkg_from_apt)
    KVER=${KPKG#linux-image-}
    ( cd "$tmpd" && apt-get download -o APT::Sandbox::User=root "$KPKG" >&2 ) || rm -f "$tmpd"/*.deb
  fi
  if ls "$tmpd"/*.deb >/dev/null 2>&1; then
    mkdir -p "$CACHE/$KVER"
    dpkg-deb -x "$tmpd"/*.deb "$CACHE/$KVER"
    depmod -b "$CACHE/$KVER" "$KVER"
  else
    # no download possible: fall back to the newest kernel already in the cache
    old=$(ls -d "$CACHE"/*/boot 2>/dev/null | sed 's#/boot$##' | sort -V | tail -1)
    [ -n "$old" ] || { rm -rf "$tmpd"; die "apt-get download $KPKG failed and no kernel is cached"; }
    KVER=$(basename "$old"); echo "rxe-vm: using cached kernel $KVER" >&2
  fi
  rm -rf "$tmpd"
fi
KDIR=$CACHE/$KVER
INITRD=$KDIR/initrd-rxevm.gz
ls "$KDIR/lib/modules/$KVER/kernel/drivers/infiniband/sw/rxe/"rdma_rxe.ko* >/dev/null 2>&1 || die "$KDIR has no rdma_rxe module"

if [ ! -f "$KDIR/.ready" ] || [ "$(cat "$KDIR/.ready")" != "$INITRD_VERSION" ]; then
  echo "rxe-vm: building initramfs for $KVER" >&2
  MODROOT=$KDIR/lib/modules/$KVER
  ird=$(mktemp -d)
  mkdir -p "$ird/bin" "$ird/mod" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/newroot" "$ird/lower" "$ird/rw"
  cp /bin/busybox "$ird/bin/busybox"
  : > "$ird/modules.list"
  for m in virtio_pci virtio_console 9pnet_virtio 9p overlay; do
    modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
  done | awk '!seen[$0]++' | while read -r f; do
    b=$(basename "$f")
    case "$f" in   # busybox insmod wants plain .ko files
      *.ko.xz)  xz -dc "$f" > "$ird/mod/${b%.xz}"; b=${b%.xz};;
      *.ko.zst) zstd -qdc "$f" > "$ird/mod/${b%.zst}"; b=${b%.zst};;
      *.ko.gz)  gzip -dc "$f" > "$ird/mod/${b%.gz}"; b=${b%.gz};;
      *)        cp "$f" "$ird/mod/";;
    esac
    echo "$b" >> "$ird/modules.list"
  done
  cat > "$ird/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fail() { echo "rxe-vm initramfs: $*"; echo o > /proc/sysrq-trigger; sleep 60; }
for m in $(cat /modules.list); do insmod /mod/$m || fail "insmod $m"; done
RUN=
for a in $(cat /proc/cmdline); do case "$a" in rxevm.run=*) RUN=${a#rxevm.run=};; esac; done
[ -n "$RUN" ] || fail "no rxevm.run= on the kernel command line"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower || fail "9p mount of host root"
mount -t tmpfs -o mode=755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || fail "overlay mount"
mkdir -p "/newroot$RUN"
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 rxerun "/newroot$RUN" || fail "9p mount of run dir"
if [ -f "/newroot$RUN/shares" ]; then
  while read -r tag path; do
    mkdir -p "/newroot$path"
    mount -t 9p -o trans=virtio,version=9p2000.L,cache=mmap,msize=512000 "$tag" "/newroot$path" || fail "9p mount of $path"
  done < "/newroot$RUN/shares"
fi
mount --move /dev /newroot/dev
umount /proc /sys
exec switch_root /newroot /bin/bash "$RUN/stage2.sh"
INIT
  chmod 755 "$ird/init"
  ( cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$INITRD.tmp"
  mv "$INITRD.tmp" "$INITRD"
  rm -rf "$ird"
  echo "$INITRD_VERSION" > "$KDIR/.ready"
fi

# ---------------------------------------------------------------- qemu binary
qemu_major() { "$1" --version 2>/dev/null | awk '/version/{split($4,v,"."); print v[1]; exit}'; }
QEMU=${RXE_VM_QEMU:-auto}
QEMU_ARGS=()
if [ "$QEMU" = auto ]; then
  QEMU=qemu-system-x86_64
  if [ "$(qemu_major qemu-system-x86_64)" -lt 8 ] 2>/dev/null; then
    BPO=$CACHE/qemu-backports
    if [ ! -x "$BPO/usr/bin/qemu-system-x86_64" ] && [ ! -f "$BPO/.failed" ]; then
      (
        set -e
        . /etc/os-release
        # the host's own Debian mirror (first deb source that carries $VERSION_CODENAME)
        MIRROR=$(awk -v c="$VERSION_CODENAME" '/^URIs:/{u=$2} /^Suites:/{for(i=2;i<=NF;i++) if($i==c){print u; exit}}' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
        [ -n "$MIRROR" ] || MIRROR=$(awk -v c="$VERSION_CODENAME" '$1=="deb" && $3==c {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
        [ -n "$MIRROR" ]
        rm -rf "$BPO"; mkdir -p "$BPO/apt/lists/partial" "$BPO/apt/cache/archives/partial" "$BPO/debs"
        echo "deb $MIRROR ${VERSION_CODENAME}-backports main" > "$BPO/apt/sources.list"
        APTO=(-o Dir::Etc::sourcelist="$BPO/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
              -o Dir::State::Lists="$BPO/apt/lists" -o Dir::Cache="$BPO/apt/cache" -o APT::Sandbox::User=root)
        apt-get -q "${APTO[@]}" update >&2
        ( cd "$BPO/debs" && apt-get -q "${APTO[@]}" download qemu-system-x86 qemu-system-data qemu-system-common >&2 )
        for d in "$BPO"/debs/*.deb; do dpkg-deb -x "$d" "$BPO"; done
        rm -rf "$BPO/debs" "$BPO/apt"
        if ldd "$BPO/usr/bin/qemu-system-x86_64" | grep 'not found' >&2; then exit 1; fi
        [ "$(qemu_major "$BPO/usr/bin/qemu-system-x86_64")" -ge 8 ]
      ) || { echo "rxe-vm: no usable backports qemu; using the system qemu (single-threaded TCG)" >&2; mkdir -p "$BPO"; touch "$BPO/.failed"; }
    fi
    if [ -x "$BPO/usr/bin/qemu-system-x86_64" ] && [ ! -f "$BPO/.failed" ]; then
      QEMU=$BPO/usr/bin/qemu-system-x86_64
      QEMU_ARGS=(-L "$BPO/usr/share/qemu" -L /usr/share/seabios)
    fi
  fi
elif [ "$QEMU" = system ]; then
  QEMU=qemu-system-x86_64
fi
QEMU_MAJOR=$(qemu_major "$QEMU")
[ -n "$QEMU_MAJOR" ] || die "cannot run $QEMU"
[ $PREPARE_ONLY = 1 ] && { echo "rxe-vm: ready: kernel $KDIR, qemu $QEMU (major $QEMU_MAJOR)" >&2; exit 0; }
exec 9>&-                     # preparation done: let other runs proceed

# ---------------------------------------------------------------- accelerator
ACCEL=${RXE_VM_ACCEL:-auto}
if [ "$ACCEL" = auto ]; then
  if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then ACCEL=kvm; else ACCEL=tcg; fi
fi
case "$ACCEL" in
  kvm) ACCEL_ARGS=(-accel kvm -cpu "${RXE_VM_CPU:-host}");;
  tcg) if [ "$QEMU_MAJOR" -ge 8 ]; then TT=${RXE_VM_TCG_THREAD:-multi}; else TT=${RXE_VM_TCG_THREAD:-single}; fi
       ACCEL_ARGS=(-accel tcg,thread=$TT -cpu "${RXE_VM_CPU:-max}");;
  *) die "RXE_VM_ACCEL must be tcg, kvm or auto";;
esac

# ---------------------------------------------------------------- per-run directory
RUN=$(mktemp -d /tmp/rxe-vm-run.XXXXXX)
chmod 755 "$RUN"
cleanup() { [ $KEEP = 1 ] && echo "rxe-vm: run dir kept: $RUN" >&2 || rm -rf "$RUN"; }
trap cleanup EXIT

# the command, quoted; the host environment (minus a few volatile variables)
{ printf 'cd %q || exit 125\n' "$WORKDIR"; printf 'exec'; printf ' %q' "$@"; printf '\n'; } > "$RUN/cmd.sh"
export -p | grep -E '^declare -x ' | grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_|TERM|TMPDIR|DISPLAY|SSH_[A-Z_]*|TMUX[A-Z_]*|XDG_RUNTIME_DIR|INVOCATION_ID|JOURNAL_STREAM|NOTIFY_SOCKET)=' > "$RUN/env.sh" || true

FSDEV_ARGS=(
  -fsdev local,id=fsroot,path=/,security_model=none,readonly=on,multidevs=remap
  -device virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot
  -fsdev local,id=fsrun,path="$RUN",security_model=none
  -device virtio-9p-pci,fsdev=fsrun,mount_tag=rxerun
)
: > "$RUN/shares"
i=0
for d in "${RW_DIRS[@]}"; do
  [ -d "$d" ] || die "-w $d: not a directory"
  FSDEV_ARGS+=(-fsdev local,id=fsrw$i,path="$d",security_model=none,multidevs=remap
               -device virtio-9p-pci,fsdev=fsrw$i,mount_tag=rxerw$i)
  echo "rxerw$i $d" >> "$RUN/shares"
  i=$((i+1))
done

cat > "$RUN/stage2.sh" <<STAGE2
#!/bin/bash
# runs as PID 1 inside the VM, on the overlay of the host's root
RUN=$RUN
KVER=$KVER
PMEM=$PMEM
MODSRC=$KDIR/lib/modules/$KVER
STAGE2
cat >> "$RUN/stage2.sh" <<'STAGE2'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
fin() { echo "$1" > "$RUN/rc"; sync; echo o > /proc/sysrq-trigger; sleep 60; }
say() { echo "rxe-vm stage2: $*" > /dev/ttyS0; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# devtmpfs lacks these; bash process substitution <(...) needs /dev/fd
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for i in 0:stdin 1:stdout 2:stderr; do [ -e "/dev/${i#*:}" ] || ln -s "/proc/self/fd/${i%%:*}" "/dev/${i#*:}"; done
mount -t tmpfs tmpfs /run
hostname rxevm
mkdir -p "/lib/modules/$KVER" && mount --bind "$MODSRC" "/lib/modules/$KVER"
t0=$(cut -d' ' -f1 /proc/uptime)
modprobe -a rdma_rxe ib_uverbs rdma_ucm dummy || { say "modprobe failed"; fin 125; }
ip link set lo up
ip link add rxenet0 type dummy && ip addr add 198.18.0.1/24 dev rxenet0 && ip link set rxenet0 up || { say "dummy netdev failed"; fin 125; }
rdma link add rxe0 type rxe netdev rxenet0 || { say "rdma link add failed"; fin 125; }
# second topology: two rxe devices on the two ends of a veth pair (198.18.3.1 <-> 198.18.3.2),
# both in this netns; policy routing sends locally generated traffic between them over the wire.
# (rxe in 6.1 only receives in the initial netns, so a netns-per-end setup does not work.)
{
  ip link add vethA type veth peer name vethB &&
  ip addr add 198.18.3.1/32 dev vethA && ip addr add 198.18.3.2/32 dev vethB &&
  ip link set vethA up && ip link set vethB up &&
  sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.vethA.accept_local=1 net.ipv4.conf.vethB.accept_local=1 \
             net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.vethA.rp_filter=0 net.ipv4.conf.vethB.rp_filter=0 &&
  ip neigh replace 198.18.3.2 lladdr "$(cat /sys/class/net/vethB/address)" dev vethA nud permanent &&
  ip neigh replace 198.18.3.1 lladdr "$(cat /sys/class/net/vethA/address)" dev vethB nud permanent &&
  ip route add table 100 198.18.3.2 dev vethA src 198.18.3.1 &&
  ip route add table 101 198.18.3.1 dev vethB src 198.18.3.2 &&
  ip rule add pref 10 iif lo to 198.18.3.2 lookup 100 &&
  ip rule add pref 11 iif lo to 198.18.3.1 lookup 101 &&
  ip rule add pref 12 oif vethB to 198.18.3.1 lookup 101 &&
  ip rule add pref 13 oif vethA to 198.18.3.2 lookup 100 &&
  ip rule add pref 100 lookup local && ip rule del pref 0 lookup local &&
  rdma link add rxeA type rxe netdev vethA && rdma link add rxeB type rxe netdev vethB
} > /dev/ttyS0 2>&1 || { say "veth/rxeA/rxeB topology failed"; fin 125; }
say "rxe ready at uptime $(cut -d' ' -f1 /proc/uptime)s (modules+link from ${t0}s)"
echo "$(cut -d' ' -f1 /proc/uptime)" > "$RUN/uptime-ready"
ulimit -l unlimited
ulimit -n 65536
OUT=
for p in /sys/class/virtio-ports/*; do
  [ "$(cat "$p/name" 2>/dev/null)" = rxevm.out ] && OUT=/dev/$(basename "$p")
done
[ -n "$OUT" ] || OUT=$RUN/output
set -a; . "$RUN/env.sh"; set +a
export HOME=${HOME:-/root}
# the topology, for tests (same names as in tools/rxe-vm/README.md); always the VM's values
export RXE_VM=1 RPMA_TEST_SAME_IP=198.18.0.1 RPMA_TEST_SERVER_IP=198.18.3.2 RPMA_TEST_CLIENT_IP=198.18.3.1
# -p: emulated PMem (memmap= on the command line gives an e820 range that nd_e820 turns into /dev/pmem0)
if [ "$PMEM" = 1 ]; then
  { modprobe -a nd_pmem nd_e820 && for _ in $(seq 50); do [ -b /dev/pmem0 ] && break; sleep 0.1; done &&
    mkfs.ext4 -q -F -b 4096 /dev/pmem0 && mkdir -p /mnt/pm && mount -o dax /dev/pmem0 /mnt/pm; } > /dev/ttyS0 2>&1 \
    || { say "emulated pmem failed"; fin 125; }
  export RXE_VM_PMEM=/mnt/pm
fi
bash "$RUN/cmd.sh" > "$OUT" 2>&1 < /dev/null
fin $?
STAGE2

# ---------------------------------------------------------------- boot
PMEM_APPEND=
if [ "$PMEM" = 1 ]; then
  [ "$MEM" -ge 3072 ] || die "-p needs at least 3072 MiB of guest memory (-m): the emulated PMem is 2 GiB to 2.25 GiB"
  PMEM_APPEND=' memmap=256M!2G'
fi
: > "$RUN/output.stream"
start=$(date +%s.%N)
timeout --kill-after=10 "$TIMEOUT" "$QEMU" "${QEMU_ARGS[@]}" \
  "${ACCEL_ARGS[@]}" -m "$MEM" -smp "$CPUS" \
  -nodefaults -no-user-config -display none -no-reboot -nic none \
  -kernel "$KDIR/boot/vmlinuz-$KVER" -initrd "$INITRD" \
  -append "console=ttyS0 panic=-1 quiet loglevel=4 rxevm.run=$RUN${PMEM_APPEND}${RXE_VM_APPEND:+ $RXE_VM_APPEND}" \
  -serial file:"$RUN/console.log" \
  -device virtio-serial-pci,id=vser0 \
  -chardev file,id=out,path="$RUN/output.stream" \
  -device virtserialport,bus=vser0.0,chardev=out,name=rxevm.out \
  "${FSDEV_ARGS[@]}" < /dev/null 2> "$RUN/qemu.err" &
QPID=$!
trap 'kill -TERM $QPID 2>/dev/null; exit 130' INT TERM
# stream the command's output live; tail exits shortly after qemu (timeout) does
tail -n +1 -s 0.2 -f --pid=$QPID "$RUN/output.stream" &
TAIL_PID=$!
set +e
wait $QPID
qrc=$?
wait $TAIL_PID
set -e
end=$(date +%s.%N)
[ -f "$RUN/output" ] && cat "$RUN/output"
[ $VERBOSE = 1 ] && { echo "----- guest console -----" >&2; cat "$RUN/console.log" >&2; }
echo "rxe-vm: qemu $QEMU_MAJOR.x accel=$ACCEL${TT:+ thread=$TT} vm wall time $(awk "BEGIN{printf \"%.1f\", $end-$start}")s, rxe ready at guest uptime $(cat "$RUN/uptime-ready" 2>/dev/null || echo '?')s" >&2
if [ -f "$RUN/rc" ]; then
  exit "$(cat "$RUN/rc")"
fi
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
  echo "rxe-vm: timeout after ${TIMEOUT}s" >&2; exit 124
fi
echo "rxe-vm: VM ended without an exit code (qemu rc=$qrc)" >&2
sed 's/^/qemu: /' "$RUN/qemu.err" >&2
tail -n 30 "$RUN/console.log" | sed 's/^/console: /' >&2
exit 125
