# Sourced by the install rehearsals in a Debian root (scripts/pi-install-qemu.sh,
# scripts/hub-install-chroot.sh): their command line, their messages, and the root
# made once with debootstrap and reused after that.
#
#   tag=pi-qemu; source "$(dirname "$0")/debian-root.sh"; root_args "$@"
#   make_root "bookworm arm64 (slow: ...)" --arch=arm64 --include=...
#
# root_args sets $root (an absolute path outside the repo), $repo and $uninstall_too.

say() { printf '[%s] %s\n' "$tag" "$*"; }
die() { printf '[%s] FAILED: %s\n' "$tag" "$*" >&2; exit 1; }

root_args() {
  uninstall_too=0
  root=""
  local arg
  for arg in "$@"; do
    case "$arg" in
      --uninstall-too) uninstall_too=1 ;;
      -h|--help) sed -n 2,20p "$0"; exit 0 ;;
      -*) echo "$(basename "$0"): unknown option $arg" >&2; exit 2 ;;
      *) root="$arg" ;;
    esac
  done
  [ -n "$root" ] || { echo "usage: $0 [--uninstall-too] ROOTDIR" >&2; exit 2; }
  [ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, mount and chroot need it)"
  command -v debootstrap >/dev/null || die "needs debootstrap (apt-get install debootstrap)"
  repo="$(cd "$(dirname "$0")/.." && pwd)"
  root="$(mkdir -p "$root" && cd "$root" && pwd)"
  case "$root" in "$repo"|"$repo"/*) die "ROOTDIR must be outside the repo" ;; esac
}

# make_root WHAT DEBOOTSTRAP_OPTION...: a bookworm root in $root, unless one is there.
make_root() {
  local what="$1"; shift
  if [ ! -e "$root/.gg-debootstrap-done" ] && [ -n "$(ls -A "$root")" ]; then
    die "$root holds an unfinished root (or something else): remove it or pick an empty directory"
  fi
  if [ ! -e "$root/.gg-debootstrap-done" ]; then
    say "debootstrap $what into $root"
    debootstrap "$@" bookworm "$root" http://deb.debian.org/debian || die "debootstrap failed"
    touch "$root/.gg-debootstrap-done"
  else
    say "reusing the bookworm root in $root"
  fi
}

# enter_root: /proc, /sys and /dev bound into $root (unbound at exit, after killing any
# $pids the caller started), this machine's resolver and its added certificate
# authorities (a network whose proxy inspects TLS has one: pip in the root needs them
# to reach PyPI as it does here).
mounted=()
pids=()
leave_root() {
  local i pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
}
enter_root() {
  trap leave_root EXIT
  local fs
  for fs in proc sys dev dev/pts; do
    mountpoint -q "$root/$fs" && continue
    mount --bind "/$fs" "$root/$fs" && mounted+=("$root/$fs")
  done
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null || die "update-ca-certificates failed in the root"
  fi
}
