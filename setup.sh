#!/usr/bin/env bash
# Install Salpakan Arbiter into ./.venv. Safe to run again.
#   bash setup.sh          the arbiter (on a Raspberry Pi: with the Pi pin libraries)
#   bash setup.sh --dev    also the test tools and the browser the page tests drive
#   bash setup.sh --service   (Raspberry Pi) also start it at boot: systemd unit + udev rules
set -euo pipefail
cd "$(dirname "$0")"

dev=0
service=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    --service) service=1 ;;
    -h|--help) sed -n 2,5p "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (try --dev)" >&2; exit 2 ;;
  esac
done

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] FAILED: %s\n' "$*" >&2; exit 1; }

on_pi=0
if [ -r /proc/device-tree/model ] && grep -qa "Raspberry Pi" /proc/device-tree/model; then
  on_pi=1
  say "Raspberry Pi detected: $(tr -d '\0' < /proc/device-tree/model)"
else
  say "not a Raspberry Pi: installing for simulation and tests"
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

apt_install() {
  # Install Debian packages that are missing; say which.
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "need Debian packages ${missing[*]} but there is no apt-get"
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq || die "apt-get update failed"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

python=${PYTHON:-python3}
command -v "$python" >/dev/null || die "python3 not found"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "Python 3.11 or later is needed (found $("$python" --version 2>&1))"

if [ $on_pi -eq 1 ]; then
  apt_install python3-venv python3-dev python3-lgpio
  venv_flags=(--system-site-packages)   # reuse Raspberry Pi OS's lgpio
else
  "$python" -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
  venv_flags=()
fi

if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  "$python" -m venv "${venv_flags[@]}" .venv || die "could not create .venv"
else
  say ".venv exists: reusing it"
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check -q)

extras=""
[ $on_pi -eq 1 ] && extras="pi"
[ $dev -eq 1 ] && extras="${extras:+$extras,}dev"
target="."
[ -n "$extras" ] && target=".[$extras]"
pins=()
# Test tools at the exact versions CI was green with (see constraints-dev.txt).
[ $dev -eq 1 ] && pins=(-c constraints-dev.txt)
say "installing the project ($target) into .venv${pins:+ (pinned by constraints-dev.txt)}"
"${pip[@]}" install "${pins[@]}" -e "$target" || die "pip install $target failed"

if [ $dev -eq 1 ]; then
  # Page tests drive Debian's Chromium through Playwright; Playwright's own
  # browser download is not used.
  # strace records the journal's system calls for the power-cut crash-state test.
  apt_install chromium strace
  [ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after install"
  # The fleet tests start a real Mosquitto broker (and use mosquitto_passwd for its users).
  apt_install mosquitto mosquitto-clients
  say "browser for page tests: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
fi

if [ $service -eq 1 ]; then
  command -v systemctl >/dev/null || die "--service needs systemd"
  venv="$(pwd)/.venv"
  user="${SUDO_USER:-$(id -un)}"
  say "installing the systemd unit (user $user, $venv) and the udev rules"
  sed -e "s|@VENV@|$venv|g" -e "s|@USER@|$user|g" firmware/systemd/gg-arbiter.service \
    | as_root tee /etc/systemd/system/gg-arbiter.service >/dev/null || die "cannot write the unit"
  as_root install -m 0644 firmware/udev/99-gg-arbiter.rules /etc/udev/rules.d/ \
    || die "cannot install the udev rules"
  as_root mkdir -p /etc/gg-arbiter
  if [ ! -e /etc/gg-arbiter/config.toml ]; then
    as_root install -m 0644 arbiter/app/default_config.toml /etc/gg-arbiter/config.toml
    say "wrote /etc/gg-arbiter/config.toml: edit it for your reader and pins"
  fi
  as_root udevadm control --reload-rules || true
  as_root systemctl daemon-reload || die "systemctl daemon-reload failed"
  as_root systemctl enable --now gg-arbiter.service || die "could not start gg-arbiter.service"
  say "gg-arbiter.service is running: journalctl -u gg-arbiter -f shows its log"
fi

say "done: $(.venv/bin/gg-arbiter --version)"
say "run it:   .venv/bin/gg-arbiter run      (simulator where there is no Pi)"
