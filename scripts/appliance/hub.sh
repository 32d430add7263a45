# Salpakan Arbiter: the venue's hub and broker as services, sourced by setup.sh for
#   sudo bash setup.sh --hub --event SLUG --tables N [--host NAME] [--broker-port PORT]
#                        [--tls-cert CERT --tls-key KEY [--tls-ca CA]]
#                                          install or update; both start now and at boot
#   sudo bash setup.sh --uninstall --hub [--purge]   remove them (--purge: ledger and broker too)
#
# Any Linux machine with systemd will do (a Pi too). What goes where:
#   /opt/gg-arbiter/{src,venv}, /usr/local/bin/gg-arbiter   the project, as the table's
#                              install puts it (appliance.sh; shared when both are here)
#   /var/lib/gg-broker         gg-arbiter broker-config's files (root:mosquitto, 0750):
#                              mosquitto.conf and acl (root, 0644), passwd (mosquitto, 0600),
#                              db/ (mosquitto, 0700: the broker's store), secrets/ and
#                              tables/ (root, 0700; every file in them 0600); with TLS,
#                              tls/ (root:mosquitto, 0750): broker.pem (0644), broker.key (0640)
#   /etc/gg-hub/hub.env        the event, its broker URL and the web port (root's, 0644)
#   /var/lib/gg-hub            the ledger, organiser PIN and the hub's broker passwords
#                              (gg-hub's, 0700; the passwords 0600)
#   /etc/systemd/system/gg-broker.service, gg-hub.service   enabled and started
# Mosquitto runs as Debian's user mosquitto, the hub as the system user gg-hub.
# Debian's own mosquitto.service (on /etc/mosquitto, port 1883) is stopped and disabled.
# Needs say, die, apt_install and on_pi from setup.sh, and appliance.sh's helpers.

HUB_USER=gg-hub
HUB_DATA=/var/lib/gg-hub
HUB_CONF_DIR=/etc/gg-hub
HUB_ENV=/etc/gg-hub/hub.env
HUB_UNIT=/etc/systemd/system/gg-hub.service
HUB_WEB_PORT=8088
BROKER_DIR=/var/lib/gg-broker
BROKER_USER=mosquitto
BROKER_UNIT=/etc/systemd/system/gg-broker.service
BROKER_PORT=1883

hub_env_value() {
  # hub_env_value KEY: its value in the installed hub.env, or nothing.
  local env="$R$HUB_ENV"
  [ -f "$env" ] || return 0
  sed -n "s/^$1=//p" "$env" | head -n 1
}

hub_check_arguments() {
  # hub_check_arguments EVENT TABLES HOST PORT TLS: refuse a bad value, or one that differs
  # from the installed broker's, before anything changes. TLS is "yes" (certificate
  # files given) or empty. Sets hub_event, hub_tables, hub_host, hub_port and hub_tls
  # (yes or no; the installed ones where not given).
  hub_event="$1" hub_tables="$2" hub_host="$3" hub_port="$4" hub_tls="$5"
  local was_event was_tables was_host was_port was_tls
  was_event="$(hub_env_value GG_HUB_EVENT)"
  if [ -n "$was_event" ]; then
    was_tables="$(hub_env_value GG_HUB_TABLES)"
    was_host="$(hub_env_value GG_VENUE_HOST)"
    was_tls="$(hub_env_value GG_VENUE_TLS)"
    was_port="$(hub_env_value GG_HUB_BROKER)"
    was_port="${was_port##*:}"
    [ -n "$hub_event" ] || hub_event="$was_event"
    [ -n "$hub_tables" ] || hub_tables="$was_tables"
    [ -n "$hub_host" ] || hub_host="$was_host"
    [ -n "$hub_port" ] || hub_port="$was_port"
    [ -n "$hub_tls" ] || hub_tls="$was_tls"
    if [ "$hub_event $hub_tables $hub_host $hub_port $hub_tls" \
      != "$was_event $was_tables $was_host $was_port $was_tls" ]; then
      die "the venue here is event $was_event, $was_tables tables, host ${was_host:-HOSTNAME.local}, broker port $was_port, TLS $was_tls (in $HUB_ENV), and every table has its login and broker address: another event, number of tables or address means new files for all; keep the ledger with 'sudo -u $HUB_USER gg-arbiter hub --event $was_event --data $HUB_DATA archive export FILE', then sudo bash setup.sh --uninstall --hub --purge, and install again"
    fi
    return 0
  fi
  [ -n "$hub_tls" ] || hub_tls=no
  [ -n "$hub_event" ] && [ -n "$hub_tables" ] \
    || die "the first --hub install needs --event SLUG and --tables N"
  [ -n "$hub_port" ] || hub_port=$BROKER_PORT
  [[ "$hub_event" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$ ]] \
    || die "--event must be 1 to 32 letters, digits, '-', '_' or '.' (not starting with one of the last three); not '$hub_event'"
  [[ "$hub_tables" =~ ^[0-9]+$ ]] && [ "$hub_tables" -ge 1 ] && [ "$hub_tables" -le 1000 ] \
    || die "--tables must be 1 to 1000, not '$hub_tables'"
  [[ "$hub_port" =~ ^[0-9]+$ ]] && [ "$hub_port" -ge 1 ] && [ "$hub_port" -le 65535 ] \
    || die "--broker-port must be 1 to 65535, not '$hub_port'"
  [[ "$hub_host" =~ ^[A-Za-z0-9.:-]*$ ]] || die "--host must be a host name or address, not '$hub_host'"
}

make_system_user() {
  # make_system_user NAME HOME COMMENT: a system user and group of that name, no login.
  user_exists "$1" && return 0
  say "adding the system user $1"
  useradd --system --user-group --home-dir "$2" --no-create-home \
    --shell /usr/sbin/nologin --comment "$3" "$1" || die "useradd $1 failed"
  changed=1
}

write_tls_files() {
  # write_tls_files CERT KEY: the broker's certificate and key where it may read them
  # (a home is hidden from the service); a rerun with renewed files replaces them.
  local tls="$BROKER_DIR/tls"
  mkdir -p "$R$tls"
  chown "root:$BROKER_USER" "$R$tls" || die "cannot give $tls to group $BROKER_USER"
  chmod 0750 "$R$tls"
  put_file "$1" "$tls/broker.pem" 0644
  put_file "$2" "$tls/broker.key" 0640
  chown "root:$BROKER_USER" "$R$tls/broker.pem" "$R$tls/broker.key" \
    || die "cannot give the broker's key to group $BROKER_USER"
}

write_broker_files() {
  # write_broker_files CA: gg-arbiter broker-config's files, written once (CA: with TLS,
  # the CA file for the tables, or empty): a rerun keeps every login (the tables hold
  # their passwords); then their owners and modes, every run.
  local dir="$R$BROKER_DIR" file tls=()
  if [ ! -f "$dir/passwd" ]; then
    say "writing the venue broker's files for event $hub_event, $hub_tables tables (gg-arbiter broker-config)"
    mkdir -p "$dir"
    if [ "$hub_tls" = yes ]; then
      tls=(--tls-cert "$dir/tls/broker.pem" --tls-key "$dir/tls/broker.key")
      [ -z "$1" ] || tls+=(--tls-ca "$1")
    fi
    "$R$GG_PREFIX/venv/bin/gg-arbiter" broker-config --tables "$hub_tables" --event "$hub_event" \
      --out "$dir" --listen-port "$hub_port" ${hub_host:+--host "$hub_host"} "${tls[@]}" \
      >/dev/null || die "gg-arbiter broker-config failed"   # its advice is for a broker run by hand
    changed=1
  fi
  # The broker reads its config, logins and ACL and writes its store; nobody else but
  # root reads the passwords, the tables' files included.
  chown "root:$BROKER_USER" "$dir" || die "cannot give $BROKER_DIR to group $BROKER_USER"
  chmod 0750 "$dir"
  chown "root:root" "$dir/mosquitto.conf" "$dir/acl" || die "cannot give the broker's config to root"
  chmod 0644 "$dir/mosquitto.conf" "$dir/acl"
  chown "$BROKER_USER:$BROKER_USER" "$dir/passwd" || die "cannot give $BROKER_DIR/passwd to $BROKER_USER"
  chmod 0600 "$dir/passwd"
  chown -R "$BROKER_USER:$BROKER_USER" "$dir/db" || die "cannot give $BROKER_DIR/db to $BROKER_USER"
  chmod 0700 "$dir/db"
  chown -R root:root "$dir/secrets" "$dir/tables" || die "cannot give the secrets to root"
  chmod 0700 "$dir/secrets" "$dir/tables"
  for file in "$dir"/secrets/* "$dir"/tables/*; do
    [ -f "$file" ] && chmod 0600 "$file"
  done
  return 0
}

write_hub_data() {
  # The ledger's directory and the hub's two broker passwords (its own, and its
  # commands' organiser login), readable by gg-hub alone.
  local user
  mkdir -p "$R$HUB_DATA"
  chown "$HUB_USER:$HUB_USER" "$R$HUB_DATA" || die "cannot give $HUB_DATA to $HUB_USER"
  chmod 0700 "$R$HUB_DATA"
  for user in hub organiser; do
    put_file "$R$BROKER_DIR/secrets/$user.password" "$HUB_DATA/$user.password" 0600
    chown "$HUB_USER:$HUB_USER" "$R$HUB_DATA/$user.password" \
      || die "cannot give $HUB_DATA/$user.password to $HUB_USER"
  done
}

write_hub_env() {
  # Written once; kept on rerun (the web port may be edited there).
  local env="$R$HUB_ENV" tmp
  mkdir -p "$R$HUB_CONF_DIR"
  chmod 0755 "$R$HUB_CONF_DIR"
  if [ ! -f "$env" ]; then
    tmp="$(mktemp)"
    cat > "$tmp" <<EOF
# Salpakan Arbiter: the hub service's settings (written by setup.sh --hub, read by
# gg-hub.service). After a change: sudo systemctl restart gg-hub
# No secrets here: the hub's broker password is $HUB_DATA/hub.password.
GG_HUB_EVENT=$hub_event
GG_HUB_BROKER=mqtt://hub@127.0.0.1:$hub_port
GG_HUB_PORT=$HUB_WEB_PORT
# What broker-config was told (setup.sh --hub compares a rerun's options with them).
GG_HUB_TABLES=$hub_tables
GG_VENUE_HOST=$hub_host
GG_VENUE_TLS=$hub_tls
EOF
    install -m 0644 "$tmp" "$env"
    rm -f "$tmp"
    say "wrote $HUB_ENV (event $hub_event, web port $HUB_WEB_PORT)"
    changed=1
  fi
  chown root:root "$env" || die "cannot give $HUB_ENV to root"
  chmod 0644 "$env"
}

install_unit_file() {
  # install_unit_file NAME DEST SED-ARGS...: scripts/appliance/NAME with its placeholders
  # filled (sed's expressions), as DEST.
  local name="$1" dest="$2" tmp
  shift 2
  tmp="$(mktemp)"
  sed "$@" "scripts/appliance/$name" > "$tmp"
  put_file "$tmp" "$dest" 0644
  rm -f "$tmp"
}

quiet_debian_broker() {
  # Debian's mosquitto.service listens on port 1883 of this machine: stopped and
  # disabled, so that gg-broker.service alone has the port.
  if systemd_running; then
    if systemctl is-enabled --quiet mosquitto.service 2>/dev/null \
      || systemctl is-active --quiet mosquitto.service 2>/dev/null; then
      systemctl disable --now mosquitto.service || die "could not stop Debian's mosquitto.service"
      say "stopped and disabled Debian's mosquitto.service (gg-broker.service is the venue's broker)"
      changed=1
    fi
  elif systemctl ${R:+--root="$R"} is-enabled --quiet mosquitto.service 2>/dev/null; then
    systemctl ${R:+--root="$R"} disable mosquitto.service || die "could not disable Debian's mosquitto.service"
    say "disabled Debian's mosquitto.service (gg-broker.service is the venue's broker)"
    changed=1
  fi
}

start_venue_services() {
  # start_venue_services BROKER_CHANGED HUB_CHANGED: enabled; restarted when changed.
  local unit what
  for unit in gg-broker gg-hub; do
    # One that was not enabled (a first install, or disabled by hand) is news.
    systemctl ${R:+--root="$R"} is-enabled --quiet $unit.service 2>/dev/null || changed=1
  done
  if systemd_running; then
    systemctl daemon-reload || die "systemctl daemon-reload failed"
    systemctl enable gg-broker.service gg-hub.service || die "could not enable gg-broker and gg-hub"
    for unit in gg-broker gg-hub; do
      what=start
      if { [ $unit = gg-broker ] && [ "$1" -eq 1 ]; } || { [ $unit = gg-hub ] && [ "$2" -eq 1 ]; }; then
        what=restart
      fi
      systemctl $what $unit.service \
        || die "could not start $unit.service: journalctl -u $unit shows why"
    done
    say "gg-broker.service and gg-hub.service are running: journalctl -u gg-hub -f shows the hub's log (and its first organiser PIN)"
  else
    systemctl ${R:+--root="$R"} enable gg-broker.service gg-hub.service \
      || die "could not enable gg-broker and gg-hub"
    say "systemd is not running here (a chroot?): gg-broker.service and gg-hub.service are enabled and start at the next boot"
  fi
}

hub_install() {
  # hub_install REPO EVENT TABLES HOST PORT [CERT KEY [CA]]: EVENT, TABLES, HOST, PORT and
  # CERT empty keep the installed ones (the first install needs EVENT and TABLES).
  local repo="$1" mosquitto broker_changed=0 hub_changed=0 lock=requirements.lock
  local cert="${6:-}" key="${7:-}" ca="${8:-}"
  umask 022
  hub_check_arguments "$2" "$3" "$4" "$5" "${cert:+yes}"
  say "venue install: hub and broker for event $hub_event ($hub_tables tables), into $R$GG_PREFIX"
  cd "$repo"
  if [ "$on_pi" -eq 1 ]; then
    # The project's venv may serve a table too: the Pi's pin libraries with it.
    install_debian_packages
    lock=requirements-pi.lock
  else
    apt_install python3-venv
  fi
  apt_install mosquitto
  mosquitto=/usr/sbin/mosquitto   # where Debian's package puts it
  [ -x "$R$mosquitto" ] || die "no $mosquitto after installing Debian's mosquitto"
  changed=0
  install_project "$repo" "$lock"
  link_command
  hub_changed=$changed

  # The venue's event, tables and address first: a run stopped halfway is then
  # compared with what its broker files were written for.
  changed=0
  write_hub_env
  if [ $changed -eq 1 ]; then hub_changed=1; fi

  changed=0
  make_system_user "$BROKER_USER" /var/lib/mosquitto "Mosquitto MQTT broker"
  [ -z "$cert" ] || write_tls_files "$cert" "$key"
  write_broker_files "$ca"
  broker_changed=$changed

  changed=0
  make_system_user "$HUB_USER" "$HUB_DATA" "Salpakan Arbiter hub"
  write_hub_data
  if [ $changed -eq 1 ]; then hub_changed=1; fi

  changed=0
  install_unit_file gg-broker.service "$BROKER_UNIT" \
    -e "s|@MOSQUITTO@|$mosquitto|g" -e "s|@USER@|$BROKER_USER|g"
  if [ $changed -eq 1 ]; then broker_changed=1; fi
  changed=0
  install_unit_file gg-hub.service "$HUB_UNIT" \
    -e "s|@VENV@|$GG_PREFIX/venv|g" -e "s|@USER@|$HUB_USER|g"
  if [ $changed -eq 1 ]; then hub_changed=1; fi
  changed=0
  quiet_debian_broker   # (changes nothing of the venue's own: restarts nothing)
  # A broker restarted alone is enough: the hub reconnects by itself.
  start_venue_services "$broker_changed" "$hub_changed"
  if [ $broker_changed -eq 0 ] && [ $hub_changed -eq 0 ] && [ $changed -eq 0 ]; then
    say "already installed: nothing changed"
  fi
  local tls_note=""
  [ "$hub_tls" = no ] || tls_note=" (TLS on 8883 for the tables, plain on $hub_port for this machine only)"
  say "done: the hub's pages on port $(hub_env_value GG_HUB_PORT), the broker on port $hub_port$tls_note;" \
    "each table's two files: sudo ls $BROKER_DIR/tables (sudo bash setup.sh --service --venue table-N.toml on the table)"
}

hub_uninstall() {
  # hub_uninstall PURGE: PURGE=1 also removes the ledger, the broker's files (every
  # login), hub.env and the user gg-hub.
  local purge="$1"
  if systemd_running; then
    systemctl disable --now gg-hub.service gg-broker.service 2>/dev/null || true
  elif [ -e "$R$HUB_UNIT" ] || [ -e "$R$BROKER_UNIT" ]; then
    systemctl ${R:+--root="$R"} disable gg-hub.service gg-broker.service || true
  fi
  rm -f "$R$HUB_UNIT" "$R$BROKER_UNIT"
  if systemd_running; then systemctl daemon-reload || true; fi
  say "removed gg-hub.service and gg-broker.service"
  if [ -e "$R$GG_UNIT" ]; then
    say "kept $GG_PREFIX and $GG_LINK: the table's gg-arbiter.service uses them"
  else
    rm -rf "$R$GG_PREFIX"
    [ -L "$R$GG_LINK" ] && rm -f "$R$GG_LINK"
    say "removed $GG_PREFIX and $GG_LINK"
  fi
  if [ "$purge" -eq 1 ]; then
    rm -rf "$R$HUB_DATA" "$R$BROKER_DIR" "$R$HUB_CONF_DIR"
    if user_exists "$HUB_USER"; then userdel "$HUB_USER" || die "userdel $HUB_USER failed"; fi
    say "purged $HUB_DATA (the ledger), $BROKER_DIR (every login), $HUB_CONF_DIR and the user $HUB_USER"
  else
    say "kept $HUB_DATA (the ledger, PIN), $BROKER_DIR (logins, the tables' files), $HUB_CONF_DIR and the user $HUB_USER: --purge removes them"
  fi
  say "left as they were: Debian packages, the user $BROKER_USER and Debian's mosquitto.service (disabled: sudo systemctl enable --now mosquitto starts it again)"
}
