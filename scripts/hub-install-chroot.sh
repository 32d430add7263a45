#!/usr/bin/env bash
# Try the venue install (setup.sh --hub) as an organiser would, in a fresh Debian
# bookworm root of this machine's architecture: the real apt-get, useradd, chown
# and pip (from PyPI), then the two services' commands run as their users.
#
#   sudo bash scripts/hub-install-chroot.sh [--uninstall-too] ROOTDIR
#
# Needs root and debootstrap (a Debian package). ROOTDIR is made with debootstrap the
# first time (minbase plus python3, systemd and CA certificates: a few minutes) and
# reused after that; put it outside the repo, e.g. /var/tmp/gg-hub-root. The repo is
# copied in and, as root in the root:
#   bash setup.sh --hub --event club-night --tables 3 --broker-port P   then the checks
#   the broker (as mosquitto) and the hub (as gg-hub, the unit's ExecStart with hub.env)
#   started by hand, as systemd would (systemd does not run in a chroot), a table logging
#   in with its installed file's password, the venue page showing it online
#   bash setup.sh --hub                 again: it must change nothing
#   bash setup.sh --uninstall --hub, then --uninstall --hub --purge     with --uninstall-too
# Packages are kept from starting their daemons in the root (policy-rc.d). The broker
# and the hub listen on free ports of this machine while they run. Exit status: 0 when
# every step passed.
set -euo pipefail

tag=hub-chroot
# shellcheck source=scripts/debian-root.sh
source "$(dirname "$0")/debian-root.sh"
root_args "$@"

make_root bookworm \
  --variant=minbase --include=python3,python3-venv,ca-certificates,passwd,systemd
# No package starts its daemon here (Debian's mosquitto would take port 1883 of this machine).
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"

enter_root

say "copying the repo to /root/salpakan-arbiter"
dest="$root/root/salpakan-arbiter"
rm -rf "$dest"
mkdir -p "$dest"
tar -C "$repo" --exclude=.git --exclude=.venv --exclude='__pycache__' --exclude=build \
  --exclude=.mypy_cache --exclude=.ruff_cache --exclude=.pytest_cache -cf - . | tar -C "$dest" -xf -

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
in_root() {
  # in_root COMMAND: bash -c COMMAND as root in the root, in the copied repo.
  chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 bash -c "cd /root/salpakan-arbiter && $1"
}

serve_in_root() {
  # serve_in_root COMMAND: in_root replacing this (background) shell, so that its pid is
  # the server's own once COMMAND execs it.
  exec chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 bash -c "$1"
}

failed=0
last_output="$(mktemp)"
step() {
  local name="$1"
  say "=== $name: $2"
  if in_root "$2" 2>&1 | tee "$last_output" | sed 's/^/    /'; then say "=== $name: ok"; else say "=== $name: FAILED"; failed=1; fi
}
check() {
  if in_root "$2" >/dev/null 2>&1; then say "check ok: $1"; else say "check FAILED: $1"; failed=1; fi
}
said() {
  if grep -qF "$2" "$last_output"; then say "check ok: $1"; else say "check FAILED: $1"; failed=1; fi
}
owned() {
  # owned PATH MODE USER:GROUP: the path's mode and owners, as the root names them.
  check "$1 is $2 $3" "[ \"\$(stat -c '%a %U:%G' $1)\" = '$2 $3' ]"
}

broker_port="$(free_port)"
web_port="$(free_port)"
step "install" "bash setup.sh --hub --event club-night --tables 3 --host 127.0.0.1 --broker-port $broker_port"
check "gg-arbiter runs from /opt/gg-arbiter/venv" "/usr/local/bin/gg-arbiter --version"
check "users gg-hub and mosquitto exist" "id gg-hub && id mosquitto"
owned /var/lib/gg-broker 750 root:mosquitto
owned /var/lib/gg-broker/passwd 600 mosquitto:mosquitto
owned /var/lib/gg-broker/db 700 mosquitto:mosquitto
owned /var/lib/gg-broker/mosquitto.conf 644 root:root
owned /var/lib/gg-broker/tables 700 root:root
owned /var/lib/gg-broker/tables/table-1.toml 600 root:root
owned /var/lib/gg-broker/tables/table-1.password 600 root:root
owned /var/lib/gg-broker/secrets/hub.password 600 root:root
owned /var/lib/gg-hub 700 gg-hub:gg-hub
owned /var/lib/gg-hub/hub.password 600 gg-hub:gg-hub
owned /var/lib/gg-hub/organiser.password 600 gg-hub:gg-hub
owned /etc/gg-hub/hub.env 644 root:root
check "both units enabled for boot" \
  "test -L /etc/systemd/system/multi-user.target.wants/gg-broker.service && test -L /etc/systemd/system/multi-user.target.wants/gg-hub.service"
check "Debian's mosquitto.service disabled" "! test -e /etc/systemd/system/multi-user.target.wants/mosquitto.service"
# (--man=no: a minimal root has no manual pages for Documentation= to name.)
check "the units verify" "systemd-analyze verify --man=no /etc/systemd/system/gg-broker.service /etc/systemd/system/gg-hub.service"

# The two services as systemd would start them: the broker's ExecStart as mosquitto, the
# hub's (hub.env's values put in, the web port changed there as an organiser may) as gg-hub.
in_root "sed -i 's/^GG_HUB_PORT=.*/GG_HUB_PORT=$web_port/' /etc/gg-hub/hub.env"
broker_log="$(mktemp)"
hub_log="$(mktemp)"
serve_in_root 'exec setpriv --reuid=mosquitto --regid=mosquitto --init-groups -- $(sed -n "s/^ExecStart=//p" /etc/systemd/system/gg-broker.service)' \
  > "$broker_log" 2>&1 &
pids+=($!)
serve_in_root 'set -a; . /etc/gg-hub/hub.env; set +a; cd /var/lib/gg-hub;
  eval "exec setpriv --reuid=gg-hub --regid=gg-hub --init-groups -- $(sed -n "s/^ExecStart=//p" /etc/systemd/system/gg-hub.service)"' \
  > "$hub_log" 2>&1 &
pids+=($!)
venue() {
  python3 - "$web_port" <<'EOF'
import json, sys, time, urllib.request
deadline = time.monotonic() + 60
while True:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/api/venue", timeout=5) as r:
            print(json.dumps(json.load(r)))
            break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.5)
EOF
}
if venue > "$last_output"; then say "check ok: the hub serves /api/venue"; else say "check FAILED: the hub serves /api/venue"; failed=1; fi
# Table 2 logs in with the password of its installed file and says it is online.
check "table 2 logs in and publishes" "/opt/gg-arbiter/venv/bin/python -c '
import paho.mqtt.publish as p
pw = open(\"/var/lib/gg-broker/tables/table-2.password\").read().strip()
p.single(\"gg/club-night/table/2/online\", \"true\", retain=True, hostname=\"127.0.0.1\",
         port=$broker_port, client_id=\"table-2\", auth={\"username\": \"table-2\", \"password\": pw})'"
shown=0
for _ in $(seq 1 40); do
  if venue | python3 -c 'import json, sys
rows = json.load(sys.stdin)["tables"]
sys.exit(not any(row["table"] == "2" and row["online"] is True for row in rows))'; then
    shown=1; break
  fi
  sleep 0.5
done
if [ $shown -eq 1 ]; then say "check ok: the venue shows table 2 online"; else say "check FAILED: the venue shows table 2 online"; failed=1; fi
if grep -q "u'hub'" "$broker_log"; then say "check ok: the hub logged in as hub"; else say "check FAILED: the hub logged in as hub"; failed=1; fi
for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
  kill -TERM "${pids[i]}" 2>/dev/null || true
  if wait "${pids[i]}"; then say "check ok: stopped cleanly"; else say "check FAILED: a service did not stop cleanly"; failed=1; fi
done
pids=()
check "the broker saved its store as mosquitto" "[ \"\$(stat -c %U /var/lib/gg-broker/db/mosquitto.db)\" = mosquitto ]"
check "the ledger is gg-hub's" "[ \"\$(stat -c %U /var/lib/gg-hub/hub.sqlite)\" = gg-hub ]"
sed 's/^/    broker: /' "$broker_log"
grep -v "organiser PIN" "$hub_log" | sed 's/^/    hub: /'
rm -f "$broker_log" "$hub_log"

step "rerun" "bash setup.sh --hub"
said "the rerun changed nothing" "nothing changed"
if [ $uninstall_too -eq 1 ]; then
  step "uninstall" "bash setup.sh --uninstall --hub"
  check "units removed" "test ! -e /etc/systemd/system/gg-hub.service && test ! -e /etc/systemd/system/gg-broker.service"
  check "/opt/gg-arbiter removed" "test ! -e /opt/gg-arbiter"
  check "ledger, logins and user kept" "test -f /var/lib/gg-hub/hub.sqlite && test -f /var/lib/gg-broker/passwd && id gg-hub"
  step "purge" "bash setup.sh --uninstall --hub --purge"
  check "ledger, logins and user gone" "test ! -e /var/lib/gg-hub && test ! -e /var/lib/gg-broker && ! id gg-hub"
fi

rm -f "$last_output"
if [ $failed -eq 0 ]; then say "RESULT: all steps passed"; else say "RESULT: some steps FAILED (see above)"; fi
exit $failed
