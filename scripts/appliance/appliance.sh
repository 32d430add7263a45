# Salpakan Arbiter: the appliance install, sourced by setup.sh for
#   sudo bash setup.sh --service [--reader KIND] [--venue table-N.toml]
#                                                    install or update, start at boot
#   sudo bash setup.sh --uninstall [--purge]         remove it (--purge: data and config too)
#
# What goes where (all root-owned except the data):
#   /opt/gg-arbiter/src        a copy of this project (the checkout can then go)
#   /opt/gg-arbiter/venv       its virtual environment (Pi pin libraries included)
#   /usr/local/bin/gg-arbiter  a link to the venv's command
#   /etc/gg-arbiter/config.toml    data_dir, reader kind, web port (0644)
#   /var/lib/gg-arbiter        games, tags, admin PIN (gg-arbiter, 0700)
#   /etc/systemd/system/gg-arbiter.service, /etc/udev/rules.d/99-gg-arbiter.rules
# The service runs as the system user gg-arbiter, in those of the groups gpio,
# i2c (keys-mcp23017) and dialout (rdm6300, mcu) that exist. The venue's hub
# (hub.sh, setup.sh --hub) shares /opt/gg-arbiter and the command: an uninstall of
# either keeps them while the other is installed.
#
# For tests, two environment variables redirect it: GG_ROOT (a prefix for every
# path written, a disposable root) and GG_MODEL_FILE (read instead of
# /proc/device-tree/model, in setup.sh). Needs say, die and apt_install from setup.sh.

GG_PREFIX=/opt/gg-arbiter
GG_USER=gg-arbiter
GG_DATA=/var/lib/gg-arbiter
GG_CONF_DIR=/etc/gg-arbiter
GG_UNIT=/etc/systemd/system/gg-arbiter.service
GG_RULES=/etc/udev/rules.d/99-gg-arbiter.rules
GG_LINK=/usr/local/bin/gg-arbiter
GG_READER_KINDS="keys-gpio keys-mcp23017 rdm6300 mcu"
GG_PORT=8080

R="${GG_ROOT:-}"
R="${R%/}"
changed=0

# --- facts about the system (read inside GG_ROOT when it is set) ---

group_exists() {
  if [ -n "$R" ]; then grep -q "^$1:" "$R/etc/group" 2>/dev/null; else getent group "$1" >/dev/null; fi
}

user_exists() {
  if [ -n "$R" ]; then grep -q "^$1:" "$R/etc/passwd" 2>/dev/null; else getent passwd "$1" >/dev/null; fi
}

systemd_running() {
  # Absent in a chroot or an image being built: then units are enabled for the next boot.
  [ -d "$R/run/systemd/system" ]
}

apt_has() {
  # Whether the package archives offer a package (installed or not).
  apt-cache show "$1" >/dev/null 2>&1
}

wanted_groups() {
  # The groups the reader kind needs, one a line: GPIO always (LEDs, buzzer, button).
  echo gpio
  case "$1" in
    keys-mcp23017) echo i2c ;;
    rdm6300|mcu) echo dialout ;;
  esac
}

configured_kind() {
  # The reader kind in an installed config, or nothing.
  local conf="$R$GG_CONF_DIR/config.toml"
  [ -f "$conf" ] || return 0
  sed -n 's/^[[:space:]]*kind[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$conf" | head -n 1
}

# --- writing, noting what changed so a rerun can say it changed nothing ---

put_file() {
  # put_file SRC DEST MODE: install SRC as DEST when it differs.
  local src="$1" dest="$R$2" mode="$3"
  if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
    chmod "$mode" "$dest"
    return 0
  fi
  mkdir -p "$(dirname "$dest")"
  install -m "$mode" "$src" "$dest" || die "cannot write $2"
  say "wrote $2"
  changed=1
}

project_tar() {
  # The project files (not the venv, git or caches) as a reproducible tar: its
  # digest lets a rerun from the same checkout skip the copy and the pip install.
  tar -C "$1" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --exclude=./.git --exclude=./.venv --exclude='__pycache__' --exclude=./build \
    --exclude='*.egg-info' --exclude=./.mypy_cache --exclude=./.ruff_cache \
    --exclude=./.pytest_cache --exclude=./.hypothesis -cf - .
}

# --- the install steps ---

install_debian_packages() {
  # gcc and the headers let pip build RPi.GPIO (no wheel for it on PyPI).
  apt_install python3-venv python3-dev gcc libc6-dev
  if apt_has python3-lgpio; then
    apt_install python3-lgpio
  else
    say "python3-lgpio is not in this system's archives (this is not Raspberry Pi OS): nothing to do, pip installs lgpio from PyPI into the venv instead"
  fi
}

install_project() {
  # install_project REPO [LOCK]: LOCK the dependencies' lock, requirements-pi.lock by
  # default (the table's); the hub's install off a Pi takes requirements.lock.
  local repo="$1" lock="${2:-requirements-pi.lock}" digest stamp="$R$GG_PREFIX/.source-sha256"
  digest="$(project_tar "$repo" | sha256sum | cut -d' ' -f1) $lock"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] && [ -x "$R$GG_PREFIX/venv/bin/gg-arbiter" ]; then
    say "$GG_PREFIX/src is this checkout already: keeping its venv"
    return 0
  fi
  say "copying the project to $GG_PREFIX/src"
  mkdir -p "$R$GG_PREFIX"
  chmod 0755 "$R$GG_PREFIX"
  rm -rf "$R$GG_PREFIX/src"
  mkdir -p "$R$GG_PREFIX/src"
  project_tar "$repo" | tar -C "$R$GG_PREFIX/src" -xf - || die "cannot copy the project to $GG_PREFIX/src"
  if [ ! -x "$R$GG_PREFIX/venv/bin/python" ]; then
    say "creating $GG_PREFIX/venv"
    # System site packages: Raspberry Pi OS's python3-lgpio is used from there.
    "$python" -m venv --system-site-packages "$R$GG_PREFIX/venv" || die "could not create $GG_PREFIX/venv"
  fi
  if [ "$lock" = requirements-pi.lock ]; then
    say "installing the locked dependencies with the Pi pin libraries into $GG_PREFIX/venv (pip may build RPi.GPIO: a minute or two)"
  else
    say "installing the locked dependencies into $GG_PREFIX/venv"
  fi
  # The versions the tests ran with, every file's hash checked (the lock);
  # then the project itself, adding nothing. No cache: under sudo it would be a
  # root-owned ~/.cache/pip in the builder's home.
  local venv_pip=("$R$GG_PREFIX/venv/bin/python" -m pip --disable-pip-version-check -q install
    --no-cache-dir)
  "${venv_pip[@]}" --require-hashes -r "$R$GG_PREFIX/src/$lock" \
    || die "pip install -r $GG_PREFIX/src/$lock failed"
  "${venv_pip[@]}" --no-deps "$R$GG_PREFIX/src" || die "pip install of $GG_PREFIX/src failed"
  echo "$digest" > "$stamp"
  changed=1
}

make_user() {
  if user_exists "$GG_USER"; then
    return 0
  fi
  say "adding the system user $GG_USER"
  useradd --system --user-group --home-dir "$GG_DATA" --no-create-home \
    --shell /usr/sbin/nologin --comment "Salpakan Arbiter" "$GG_USER" \
    || die "useradd $GG_USER failed"
  changed=1
}

set_groups() {
  # set_groups KIND: the user's supplementary groups, those of wanted_groups that exist.
  local group have=() missing=()
  while read -r group; do
    if group_exists "$group"; then have+=("$group"); else missing+=("$group"); fi
  done < <(wanted_groups "$1")
  for group in "${missing[@]}"; do
    say "group $group does not exist here: skipped (Raspberry Pi OS has it; the device nodes may need it)"
  done
  gg_groups="${have[*]}"
  local joined
  joined="$(IFS=,; echo "${have[*]}")"
  usermod -G "$joined" "$GG_USER" || die "usermod -G $joined $GG_USER failed"
  say "$GG_USER is in the groups: ${gg_groups:-none}"
}

make_data_dir() {
  mkdir -p "$R$GG_DATA"
  chown "$GG_USER:$GG_USER" "$R$GG_DATA" || die "cannot give $GG_DATA to $GG_USER"
  # Ranks are secret during a game: no other account may read the data.
  chmod 0700 "$R$GG_DATA"
}

write_config() {
  # write_config KIND: a config naming the data dir, reader and port; kept on rerun,
  # only its reader kind changed when --reader asks for another.
  local kind="$1" conf="$R$GG_CONF_DIR/config.toml" tmp
  mkdir -p "$R$GG_CONF_DIR"
  chmod 0755 "$R$GG_CONF_DIR"
  if [ ! -f "$conf" ]; then
    tmp="$(mktemp)"
    cat > "$tmp" <<EOF
# Salpakan Arbiter: this device's settings (written by setup.sh --service).
# Every other key and its default: $GG_PREFIX/src/arbiter/app/default_config.toml
# After a change: sudo systemctl restart gg-arbiter
# Every account can read this file: leave web.admin_pin out (gg-arbiter set-pin
# keeps the PIN in the private data directory instead).
data_dir = "$GG_DATA"

[reader]
# keys-gpio, keys-mcp23017, rdm6300 or mcu; sudo bash setup.sh --service --reader KIND
# changes it and the groups and interfaces it needs.
kind = "$kind"

[web]
port = $GG_PORT
EOF
    install -m 0644 "$tmp" "$conf"
    rm -f "$tmp"
    say "wrote $GG_CONF_DIR/config.toml (reader $kind): edit it for your pins"
    changed=1
  elif [ "$(configured_kind)" != "$kind" ]; then
    sed -i "0,/^\([[:space:]]*kind[[:space:]]*=[[:space:]]*\)\"[^\"]*\"/s//\1\"$kind\"/" "$conf"
    say "reader kind in $GG_CONF_DIR/config.toml set to $kind"
    changed=1
  fi
  # Readable by all: the bench commands (selftest, enroll) run from a login
  # shell read the reader and pins from it. Secrets live in the data dir.
  chown root:root "$conf" || die "cannot give $GG_CONF_DIR/config.toml to root"
  chmod 0644 "$conf"
}

install_udev_rules() {
  put_file scripts/appliance/99-gg-arbiter.rules "$GG_RULES" 0644
  if udevadm control --reload 2>/dev/null; then
    # Devices already plugged in get their names and groups now, not at next plug-in.
    udevadm trigger --subsystem-match=tty || say "udevadm trigger failed: replug the readers"
  else
    say "udev is not running here (a chroot?): the rules apply at the next boot"
  fi
}

enable_interfaces() {
  # enable_interfaces KIND: I2C for the MCP23017, the UART for an RDM6300.
  local kind="$1" config_txt=/boot/firmware/config.txt
  [ -e "$R/boot/config.txt" ] && [ ! -e "$R$config_txt" ] && config_txt=/boot/config.txt
  case "$kind" in
    keys-mcp23017)
      if command -v raspi-config >/dev/null; then
        raspi-config nonint do_i2c 0 || die "raspi-config could not enable I2C"
        say "I2C enabled (raspi-config)"
      else
        say "no raspi-config: enable I2C yourself: add the line 'dtparam=i2c_arm=on' to $config_txt and 'i2c-dev' to /etc/modules, then reboot"
      fi ;;
    rdm6300)
      if command -v raspi-config >/dev/null; then
        # The serial port on, the login console off it.
        raspi-config nonint do_serial_hw 0 && raspi-config nonint do_serial_cons 1 \
          || die "raspi-config could not enable the serial port"
        say "serial port enabled, serial console off (raspi-config)"
      else
        say "no raspi-config: for a reader on the Pi's own UART add 'enable_uart=1' to $config_txt and remove 'console=serial0,115200' from cmdline.txt, then reboot (USB adapters need nothing)"
      fi ;;
  esac
}

install_unit() {
  # The unit with its placeholders filled: this venv, this user, the groups that exist.
  local tmp
  tmp="$(mktemp)"
  sed -e "s|@VENV@|$GG_PREFIX/venv|g" -e "s|@USER@|$GG_USER|g" -e "s|@GROUPS@|$gg_groups|g" \
    scripts/appliance/gg-arbiter.service > "$tmp"
  [ -n "$gg_groups" ] || sed -i '/^SupplementaryGroups=$/d' "$tmp"
  put_file "$tmp" "$GG_UNIT" 0644
  rm -f "$tmp"
}

link_command() {
  mkdir -p "$R$(dirname "$GG_LINK")"
  if [ "$(readlink "$R$GG_LINK" 2>/dev/null)" != "$GG_PREFIX/venv/bin/gg-arbiter" ]; then
    ln -sfn "$GG_PREFIX/venv/bin/gg-arbiter" "$R$GG_LINK"
    say "linked $GG_LINK"
    changed=1
  fi
}

start_service() {
  if systemd_running; then
    systemctl daemon-reload || die "systemctl daemon-reload failed"
    systemctl enable gg-arbiter.service || die "could not enable gg-arbiter.service"
    if [ $changed -eq 1 ]; then
      systemctl restart gg-arbiter.service || die "could not start gg-arbiter.service: journalctl -u gg-arbiter shows why"
    else
      systemctl start gg-arbiter.service || die "could not start gg-arbiter.service: journalctl -u gg-arbiter shows why"
    fi
    say "gg-arbiter.service is running: journalctl -u gg-arbiter -f shows its log (and the first admin PIN)"
  else
    systemctl ${R:+--root="$R"} enable gg-arbiter.service || die "could not enable gg-arbiter.service"
    say "systemd is not running here (a chroot?): gg-arbiter.service is enabled and starts at the next boot"
  fi
}

join_venue() {
  # join_venue FILE: the table's place in a tournament, from the file broker-config wrote
  # for it: [tournament] in the config, the password in the data dir (gg-arbiter join).
  local file="$1"
  "$R$GG_PREFIX/venv/bin/gg-arbiter" join "$file" --config "$R$GG_CONF_DIR/config.toml" \
    --data "$R$GG_DATA" || die "gg-arbiter join $file failed (nothing else changed)"
  changed=1
}

appliance_install() {
  # appliance_install REPO KIND [VENUE]: KIND empty keeps the installed config's, else
  # keys-gpio; VENUE a table's file from gg-arbiter broker-config.
  local repo="$1" kind="$2" venue="${3:-}"
  umask 022
  [ -n "$kind" ] || kind="$(configured_kind)"
  [ -n "$kind" ] || kind=keys-gpio
  case " $GG_READER_KINDS " in
    *" $kind "*) ;;
    *) die "unknown reader kind $kind (one of: $GG_READER_KINDS)" ;;
  esac
  say "appliance install: reader $kind, into $R$GG_PREFIX"
  cd "$repo"
  install_debian_packages
  install_project "$repo"
  make_user
  set_groups "$kind"
  make_data_dir
  write_config "$kind"
  [ -z "$venue" ] || join_venue "$venue"
  install_udev_rules
  enable_interfaces "$kind"
  install_unit
  link_command
  start_service
  if [ $changed -eq 0 ]; then say "already installed: nothing changed"; fi
  say "done: $("$R$GG_PREFIX/venv/bin/gg-arbiter" --version 2>/dev/null || echo gg-arbiter), web page on port $GG_PORT"
}

appliance_uninstall() {
  # appliance_uninstall PURGE: PURGE=1 also removes data, config and the user.
  local purge="$1"
  if systemd_running; then
    systemctl disable --now gg-arbiter.service 2>/dev/null || true
  elif [ -e "$R$GG_UNIT" ]; then
    systemctl ${R:+--root="$R"} disable gg-arbiter.service || true
  fi
  rm -f "$R$GG_UNIT" "$R$GG_RULES"
  if systemd_running; then systemctl daemon-reload || true; fi
  udevadm control --reload 2>/dev/null || true
  if [ -e "$R$HUB_UNIT" ]; then
    # The venue's hub (hub.sh) runs from the same venv.
    say "removed the unit and the udev rules; kept $GG_PREFIX and $GG_LINK: gg-hub.service uses them"
  else
    [ -L "$R$GG_LINK" ] && rm -f "$R$GG_LINK"
    rm -rf "$R$GG_PREFIX"
    say "removed $GG_PREFIX, the unit, the udev rules and $GG_LINK"
  fi
  if [ "$purge" -eq 1 ]; then
    rm -rf "$R$GG_DATA" "$R$GG_CONF_DIR"
    if user_exists "$GG_USER"; then userdel "$GG_USER" || die "userdel $GG_USER failed"; fi
    say "purged $GG_DATA, $GG_CONF_DIR and the user $GG_USER"
  else
    say "kept $GG_DATA (games, tags, PIN), $GG_CONF_DIR and the user $GG_USER: --purge removes them"
  fi
  say "left as they were: Debian packages and I2C/UART settings"
}
