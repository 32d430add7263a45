#!/usr/bin/env bash
# Try the appliance install (setup.sh --service) as a new builder would, in a
# Debian bookworm arm64 root run under qemu-user: Raspberry Pi OS is bookworm
# arm64 plus the Raspberry Pi archive, so this shows what a plain Debian base
# lacks (python3-lgpio) and that pip can build RPi.GPIO with the compilers
# setup.sh installs.
#
#   sudo bash scripts/pi-install-qemu.sh [--uninstall-too] ROOTDIR
#
# Needs root, debootstrap and qemu-user-static (Debian packages). ROOTDIR is
# made with debootstrap the first time (about 15 minutes on two cores) and
# reused after that; put it outside the repo, e.g. /var/tmp/gg-pi-root.
# The repo is copied to /home/pi/salpakan-arbiter inside, a "pi" user with
# password-less sudo is made (as on Raspberry Pi OS), and the script runs, as
# sudo would from pi's shell (root, SUDO_USER=pi),
#   bash setup.sh --service      twice (the second run must change nothing)
#   bash setup.sh --service --reader rdm6300     (groups, unit and UART follow)
#   bash setup.sh --uninstall, then --uninstall --purge     with --uninstall-too
# with GG_MODEL_FILE pointing at a fake /proc/device-tree/model. systemd does
# not run in a chroot: setup.sh enables the unit for the next boot instead of
# starting it. Exit status: 0 when every step passed.
set -euo pipefail

tag=pi-qemu
# shellcheck source=scripts/debian-root.sh
source "$(dirname "$0")/debian-root.sh"
root_args "$@"
[ -x /usr/bin/qemu-aarch64-static ] || die "needs qemu-user-static (apt-get install qemu-user-static)"

# Running arm64 programs needs the kernel's binfmt_misc with qemu registered.
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || die "cannot mount binfmt_misc"
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  update-binfmts --enable qemu-aarch64 || die "cannot register qemu-aarch64 with binfmt_misc"
fi

make_root "bookworm arm64 (slow: the second stage runs under qemu)" \
  --arch=arm64 --include=sudo,ca-certificates,python3,python3-venv
# With binfmt's F flag the kernel keeps qemu open; a copy inside helps when it is absent.
install -D -m 0755 /usr/bin/qemu-aarch64-static "$root/usr/bin/qemu-aarch64-static"
chroot "$root" uname -m | grep -qx aarch64 || die "the root does not run as aarch64"

enter_root

# The builder's account, as Raspberry Pi OS makes it.
chroot "$root" id pi >/dev/null 2>&1 || chroot "$root" useradd -m -s /bin/bash pi
echo "pi ALL=(ALL) NOPASSWD: ALL" > "$root/etc/sudoers.d/010_pi-nopasswd"
chmod 0440 "$root/etc/sudoers.d/010_pi-nopasswd"
echo "Raspberry Pi 4 Model B Rev 1.5" > "$root/etc/gg-fake-model"

say "copying the repo to /home/pi/salpakan-arbiter"
dest="$root/home/pi/salpakan-arbiter"
rm -rf "$dest"
mkdir -p "$dest"
tar -C "$repo" --exclude=.git --exclude=.venv --exclude='__pycache__' \
  --exclude=.mypy_cache --exclude=.ruff_cache --exclude=.pytest_cache -cf - . | tar -C "$dest" -xf -
chroot "$root" chown -R pi:pi /home/pi/salpakan-arbiter

as_sudo_pi() {
  # What `sudo CMD` from pi's shell gives: root, SUDO_USER=pi, in pi's checkout.
  # (sudo itself cannot run here: setuid programs do not work under qemu-user
  # unless binfmt_misc registered qemu with the C flag.)
  chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 SUDO_USER=pi SUDO_UID=1000 SUDO_GID=1000 \
    GG_MODEL_FILE=/etc/gg-fake-model bash -c "cd /home/pi/salpakan-arbiter && $1"
}

failed=0
last_output="$(mktemp)"
step() {
  # step NAME COMMAND: run COMMAND as pi would with sudo, log its output, note the result.
  local name="$1"
  say "=== $name: sudo $2"
  if as_sudo_pi "$2" 2>&1 | tee "$last_output" | sed 's/^/    /'; then say "=== $name: ok"; else say "=== $name: FAILED"; failed=1; fi
}
check() {
  # check WHAT COMMAND: a fact about the root after the install (run as root in it).
  if chroot "$root" bash -c "$2" >/dev/null 2>&1; then say "check ok: $1"; else say "check FAILED: $1"; failed=1; fi
}
said() {
  # said WHAT TEXT: the last step printed TEXT.
  if grep -qF "$2" "$last_output"; then say "check ok: $1"; else say "check FAILED: $1"; failed=1; fi
}

step "install" "bash setup.sh --service"
said "the one-line python3-lgpio hint" "python3-lgpio is not in this system's archives"
check "gg-arbiter runs from /opt/gg-arbiter/venv" "/usr/local/bin/gg-arbiter --version"
check "RPi.GPIO was built from source (gcc)" "ls /opt/gg-arbiter/venv/lib/python3*/site-packages/RPi/_GPIO*.so"
check "lgpio is in the venv" "/opt/gg-arbiter/venv/bin/python -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(\"lgpio\") is None)'"
check "gpiozero imports" "/opt/gg-arbiter/venv/bin/python -c 'import gpiozero'"
check "user gg-arbiter exists" "id gg-arbiter"
check "/var/lib/gg-arbiter is 0700 gg-arbiter" "[ \"\$(stat -c '%a %U' /var/lib/gg-arbiter)\" = '700 gg-arbiter' ]"
check "/etc/gg-arbiter/config.toml exists" "test -f /etc/gg-arbiter/config.toml"
check "unit enabled for boot" "test -L /etc/systemd/system/multi-user.target.wants/gg-arbiter.service"
check "no root-owned files in the pi home" "[ -z \"\$(find /home/pi -user root -print -quit)\" ]"
check "the unit verifies" "systemd-analyze verify /etc/systemd/system/gg-arbiter.service"
# What the unit would start, as its user and in its working directory (the
# simulator: no pins here), with the installed config and data directory.
echo status > "$root/tmp/gg-smoke.txt"
check "the service user runs it with the installed config and data" \
  "cd /var/lib/gg-arbiter && runuser -u gg-arbiter -- /opt/gg-arbiter/venv/bin/gg-arbiter run --sim --script /tmp/gg-smoke.txt --port 0 && [ \"\$(stat -c %U /var/lib/gg-arbiter/games)\" = gg-arbiter ]"
step "rerun" "bash setup.sh --service"
said "the rerun changed nothing" "nothing changed"
step "another reader" "bash setup.sh --service --reader rdm6300"
check "gg-arbiter is in dialout" "id -nG gg-arbiter | grep -qw dialout"
check "the unit names dialout" "grep -qx 'SupplementaryGroups=dialout' /etc/systemd/system/gg-arbiter.service"
said "the config.txt line for the UART (no raspi-config here)" "enable_uart=1"
if [ $uninstall_too -eq 1 ]; then
  step "uninstall" "bash setup.sh --uninstall"
  check "unit removed" "test ! -e /etc/systemd/system/gg-arbiter.service"
  check "/opt/gg-arbiter removed" "test ! -e /opt/gg-arbiter"
  check "data, config and user kept" "test -d /var/lib/gg-arbiter && test -f /etc/gg-arbiter/config.toml && id gg-arbiter"
  step "purge" "bash setup.sh --uninstall --purge"
  check "data, config and user gone" "test ! -e /var/lib/gg-arbiter && test ! -e /etc/gg-arbiter && ! id gg-arbiter"
fi

rm -f "$last_output"
if [ $failed -eq 0 ]; then say "RESULT: all steps passed"; else say "RESULT: some steps FAILED (see above)"; fi
exit $failed
