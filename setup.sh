#!/usr/bin/env bash
# Install Salpakan Arbiter into ./.venv. Safe to run again.
#   bash setup.sh          the arbiter (on a Raspberry Pi: with the Pi pin libraries)
#   bash setup.sh --dev    also the test tools and the browser the page tests drive
#   sudo bash setup.sh --service [--reader KIND] [--venue table-N.toml]   (Raspberry Pi) the
#        appliance: installs to /opt/gg-arbiter, runs at boot as user gg-arbiter
#        (scripts/appliance/appliance.sh; no .venv here); --venue: a tournament table, the file
#        gg-arbiter broker-config wrote for it (its password file beside it)
#   sudo bash setup.sh --uninstall [--purge]   removes it (--purge: data and config too)
#   sudo bash setup.sh --hub --event SLUG --tables N [--host NAME] [--broker-port PORT]
#                        [--tls-cert CERT --tls-key KEY [--tls-ca CA]]
#        (any Linux machine with systemd) the venue: its broker (Mosquitto on broker-config's
#        files) and the hub as services, gg-broker and gg-hub (scripts/appliance/hub.sh);
#        --host: the name the tables reach it by (default HOSTNAME.local); --tls-*: the
#        broker's certificate and key (TLS on 8883 for the tables), the CA that signed it
#   sudo bash setup.sh --uninstall --hub [--purge]   removes them (--purge: ledger, logins too)
set -euo pipefail
cd "$(dirname "$0")"

all_args="$*"
dev=0
service=0
hub=0
event=""
tables=""
host=""
broker_port=""
tls_cert=""
tls_key=""
tls_ca=""
uninstall=0
purge=0
reader=""
venue=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dev) dev=1 ;;
    --service) service=1 ;;
    --reader) [ $# -ge 2 ] || { echo "setup.sh: --reader needs a KIND" >&2; exit 2; }
      reader="$2"; shift ;;
    --reader=*) reader="${1#--reader=}" ;;
    --venue) [ $# -ge 2 ] || { echo "setup.sh: --venue needs a FILE (table-N.toml)" >&2; exit 2; }
      venue="$2"; shift ;;
    --venue=*) venue="${1#--venue=}" ;;
    --hub) hub=1 ;;
    --event|--tables|--host|--broker-port|--tls-cert|--tls-key|--tls-ca)
      [ $# -ge 2 ] || { echo "setup.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --event) event="$2" ;; --tables) tables="$2" ;; --host) host="$2" ;;
        --broker-port) broker_port="$2" ;;
        --tls-cert) tls_cert="$2" ;; --tls-key) tls_key="$2" ;; --tls-ca) tls_ca="$2" ;;
      esac
      shift ;;
    --uninstall) uninstall=1 ;;
    --purge) purge=1 ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$reader" ] && [ $service -eq 0 ]; then
  echo "setup.sh: --reader goes with --service" >&2; exit 2
fi
if [ -n "$venue" ]; then
  [ $service -eq 1 ] || { echo "setup.sh: --venue goes with --service" >&2; exit 2; }
  # Named from where setup.sh was started (it has changed to its own directory since).
  case "$venue" in /*) ;; *) venue="$OLDPWD/$venue" ;; esac
  [ -f "$venue" ] || { echo "setup.sh: --venue $venue: no such file" >&2; exit 2; }
fi
if [ $purge -eq 1 ] && [ $uninstall -eq 0 ]; then
  echo "setup.sh: --purge goes with --uninstall" >&2; exit 2
fi
runs=$((service + hub + uninstall + dev))
[ $((hub + uninstall)) -lt 2 ] || runs=$((runs - 1))   # --uninstall --hub: one run
if [ $runs -gt 1 ]; then
  echo "setup.sh: --dev, --service, --hub and --uninstall are separate runs (but --uninstall --hub)" >&2; exit 2
fi
if [ -n "$event$tables$host$broker_port$tls_cert$tls_key$tls_ca" ] \
  && { [ $hub -eq 0 ] || [ $uninstall -eq 1 ]; }; then
  echo "setup.sh: --event, --tables, --host, --broker-port and --tls-* go with --hub" >&2; exit 2
fi
if [ -n "$tls_cert$tls_key$tls_ca" ]; then
  [ -n "$tls_cert" ] && [ -n "$tls_key" ] \
    || { echo "setup.sh: give --tls-cert and --tls-key together (--tls-ca with them)" >&2; exit 2; }
  for name in tls_cert tls_key tls_ca; do
    file="${!name}"
    [ -n "$file" ] || continue
    # Named from where setup.sh was started (it has changed to its own directory since).
    case "$file" in /*) ;; *) file="$OLDPWD/$file"; printf -v "$name" '%s' "$file" ;; esac
    [ -f "$file" ] || { echo "setup.sh: --${name//_/-} $file: no such file" >&2; exit 2; }
  done
fi
if [ $((service + hub + uninstall)) -eq 0 ] && [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] \
  && [ "$SUDO_USER" != root ] && [ -z "${GG_ROOT:-}" ]; then
  # Through sudo, .venv (in the user's checkout) would become root's.
  echo "setup.sh: run it without sudo (it asks sudo for Debian packages itself); sudo is for --service, --hub and --uninstall" >&2
  exit 2
fi

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] FAILED: %s\n' "$*" >&2; exit 1; }

# GG_MODEL_FILE and GG_ROOT let tests run the appliance install in a disposable root.
model_file="${GG_MODEL_FILE:-/proc/device-tree/model}"
on_pi=0
if [ -r "$model_file" ] && grep -qa "Raspberry Pi" "$model_file"; then
  on_pi=1
  say "Raspberry Pi detected: $(tr -d '\0' < "$model_file")"
elif [ $((uninstall + hub)) -eq 0 ]; then
  say "not a Raspberry Pi: installing for simulation and tests"
fi

as_root() {
  if [ "$(id -u)" -eq 0 ] || [ -n "${GG_ROOT:-}" ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

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

# The appliance install (and the Pi packages both installs need).
# shellcheck source=scripts/appliance/appliance.sh
. scripts/appliance/appliance.sh
# The venue's hub and broker as services.
# shellcheck source=scripts/appliance/hub.sh
. scripts/appliance/hub.sh

if [ $hub -eq 1 ]; then
  [ "$(id -u)" -eq 0 ] || [ -n "${GG_ROOT:-}" ] || die "run it as root: sudo bash setup.sh $all_args"
  if [ $uninstall -eq 1 ]; then
    hub_uninstall "$purge"
  else
    hub_install "$(pwd)" "$event" "$tables" "$host" "$broker_port" "$tls_cert" "$tls_key" "$tls_ca"
  fi
  exit 0
fi

if [ $service -eq 1 ] || [ $uninstall -eq 1 ]; then
  # The appliance has its own root-owned venv under /opt: run as root, so
  # nothing here (no .venv) is touched and nothing in a home becomes root's.
  [ "$(id -u)" -eq 0 ] || [ -n "${GG_ROOT:-}" ] || die "run it as root: sudo bash setup.sh $all_args"
  if [ $uninstall -eq 1 ]; then
    appliance_uninstall "$purge"
  else
    [ $on_pi -eq 1 ] || die "--service is for a Raspberry Pi ($model_file does not name one); without it: bash setup.sh"
    appliance_install "$(pwd)" "$reader" "$venue"
  fi
  exit 0
fi

if [ $on_pi -eq 1 ]; then
  install_debian_packages
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

# The runtime dependencies exactly as tested: the lock's versions, every file's hash
# checked (scripts/lock.sh writes the locks from pyproject.toml); on a Pi the lock
# that adds the Pi pin libraries.
lock=requirements.lock
[ $on_pi -eq 1 ] && lock=requirements-pi.lock
say "installing the locked dependencies ($lock) into .venv"
"${pip[@]}" install --require-hashes -r "$lock" || die "pip install -r $lock failed"
if [ $dev -eq 1 ]; then
  # Test tools at the exact versions CI was green with (constraints-dev.txt, which
  # names the locked versions of the runtime dependencies too).
  say "installing the project and its test tools (pinned by constraints-dev.txt) into .venv"
  "${pip[@]}" install -c constraints-dev.txt -e ".[dev]" || die "pip install .[dev] failed"
else
  say "installing the project into .venv"
  "${pip[@]}" install --no-deps -e . || die "pip install . failed"
fi

if [ $dev -eq 1 ]; then
  # Page tests drive Debian's Chromium through Playwright; Playwright's own
  # browser download is not used.
  # strace records the journal's system calls for the power-cut crash-state test.
  apt_install chromium strace
  # systemd-analyze verifies the unit the appliance install renders.
  apt_install systemd
  [ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after install"
  # The fleet tests start a real Mosquitto broker (and use mosquitto_passwd for its users).
  apt_install mosquitto mosquitto-clients
  # dot renders the wiring diagrams (hardware/harness.py, WireViz).
  apt_install graphviz
  # The hardware tests render every OpenSCAD model to a PNG (hardware/models.py).
  apt_install openscad xvfb xauth
  # ... and slice every print file on a 180 mm bed (hardware/print.py).
  apt_install prusa-slicer
  # A Debian root for the installs' rehearsals: scripts/hub-install-chroot.sh (bookworm)
  # and scripts/pi-install-qemu.sh (arm64 under qemu-user-static, as on a Pi).
  apt_install debootstrap qemu-user-static
  say "browser for page tests: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  # The accessibility tests inject axe-core (npm, pinned by tests/a11y/package-lock.json).
  command -v npm >/dev/null || apt_install npm
  (cd tests/a11y && npm ci --ignore-scripts --no-audit --no-fund --silent) \
    || die "npm ci in tests/a11y failed"
  say "axe-core for the accessibility tests: $(node -p 'require("./tests/a11y/node_modules/axe-core/package.json").version')"
fi

say "done: $(.venv/bin/gg-arbiter --version)"
say "run it:   .venv/bin/gg-arbiter run      (simulator where there is no Pi)"
