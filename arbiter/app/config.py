"""The arbiter's configuration: one TOML file over the shipped defaults.

The defaults live in ``default_config.toml`` beside this module (the one
source of truth for pins, ports and tunes; docs are generated from it). A
user file only needs the keys it changes. Every error names the file and key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from arbiter.app.errors import ConfigError
from arbiter.errors import PinFormatError
from arbiter.fleet.errors import SettingsError
from arbiter.fleet.settings import TournamentSettings
from arbiter.pinrule import check_pin_format
from arbiter.storage.paths import default_data_dir
from arbiter.tunes.defaults import REQUIRED_TUNES, load_tunes
from arbiter.tunes.errors import RtttlError

READER_KINDS = ("keys-gpio", "keys-mcp23017", "rdm6300", "mcu", "sim")
BUZZER_KINDS = ("passive", "active", "none")


def default_text() -> str:
    """The shipped, commented default config file."""
    return resources.files("arbiter.app").joinpath("default_config.toml").read_text()


@dataclass(frozen=True)
class ReaderConfig:
    kind: str
    attacker_pins: tuple[int, ...]
    defender_pins: tuple[int, ...]
    debounce_ms: int
    invalid_after_ms: int
    i2c_bus: int
    i2c_address: int
    interrupt_pin: int
    attacker_port: str
    defender_port: str
    removal_timeout_ms: int
    mcu_port: str
    rx_gain_db: int


@dataclass(frozen=True)
class SignalsConfig:
    attacker_led: int
    defender_led: int
    status_led: int
    buzzer_pin: int
    buzzer_kind: str
    battle_phrase: bool


@dataclass(frozen=True)
class ButtonConfig:
    new_game_pin: int
    hold_seconds: float


@dataclass(frozen=True)
class WebConfig:
    host: str
    port: int
    admin_pin: str | None
    stream_capacity: int = 200
    request_timeout: float = 10.0


@dataclass(frozen=True)
class Config:
    """A checked configuration. ``source`` is the user file, or None for defaults."""

    data_dir: Path
    reader: ReaderConfig
    signals: SignalsConfig
    button: ButtonConfig
    web: WebConfig
    tunes: dict[str, str]
    source: Path | None
    tournament: TournamentSettings = field(default_factory=TournamentSettings)

    def gpio_pins(self) -> dict[str, int]:
        """Every Pi GPIO the configuration uses, by role (for the pinout and clash checks)."""
        pins: dict[str, int] = {}
        if self.reader.kind == "keys-gpio":
            for i, pin in enumerate(self.reader.attacker_pins, 1):
                pins[f"attacker switch {i}"] = pin
            for i, pin in enumerate(self.reader.defender_pins, 1):
                pins[f"defender switch {i}"] = pin
        if self.reader.kind == "keys-mcp23017":
            pins["MCP23017 INTA"] = self.reader.interrupt_pin
        pins["attacker LED"] = self.signals.attacker_led
        pins["defender LED"] = self.signals.defender_led
        pins["status LED"] = self.signals.status_led
        if self.signals.buzzer_kind != "none":
            pins["buzzer"] = self.signals.buzzer_pin
        pins["NEW GAME button"] = self.button.new_game_pin
        return pins


def _merge(base: dict[str, Any], over: dict[str, Any], where: str, name: str) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        dotted = f"{where}.{key}" if where else key
        if key not in base and where != "tunes":
            raise ConfigError(f"{name}: unknown key '{dotted}'")
        if isinstance(base.get(key), dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{name}: '{dotted}' must be a table")
            merged[key] = _merge(base[key], value, dotted, name)
        else:
            merged[key] = value
    return merged


class _Checker:
    def __init__(self, table: dict[str, Any], section: str, name: str) -> None:
        self.table, self.section, self.name = table, section, name

    def _fail(self, key: str, message: str) -> ConfigError:
        dotted = f"{self.section}.{key}" if self.section else key
        return ConfigError(f"{self.name}: '{dotted}' {message}")

    def integer(self, key: str, low: int, high: int) -> int:
        value = self.table[key]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise self._fail(key, f"must be a whole number from {low} to {high}, not {value!r}")
        return value

    def pin(self, key: str) -> int:
        return self.integer(key, 0, 27)

    def pins(self, key: str) -> tuple[int, ...]:
        value = self.table[key]
        if not isinstance(value, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= 27 for p in value
        ):
            raise self._fail(key, f"must be a list of BCM pin numbers 0..27, not {value!r}")
        if len(set(value)) != len(value):
            raise self._fail(key, "lists a pin twice")
        return tuple(value)

    def text(self, key: str, choices: tuple[str, ...] = ()) -> str:
        value = self.table[key]
        if not isinstance(value, str):
            raise self._fail(key, f"must be text, not {value!r}")
        if choices and value not in choices:
            raise self._fail(key, f"must be one of {', '.join(choices)}, not {value!r}")
        return value

    def flag(self, key: str) -> bool:
        value = self.table[key]
        if not isinstance(value, bool):
            raise self._fail(key, f"must be true or false, not {value!r}")
        return value

    def number(self, key: str, low: float, high: float) -> float:
        value = self.table[key]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not low <= value <= high:
            raise self._fail(key, f"must be a number from {low} to {high}, not {value!r}")
        return float(value)


def load_config(path: str | Path | None = None, *, data_dir: str | Path | None = None) -> Config:
    """The shipped defaults, overridden by ``path`` if given.

    :raises ConfigError: naming the file and the key.
    """
    name = str(path) if path else "default config"
    raw = _read(path, name)
    # Section by section, in the file's order, so the first bad key is the one named.
    reader = _reader(_Checker(raw["reader"], "reader", name))
    signals = _signals(_Checker(raw["signals"], "signals", name))
    button = _button(_Checker(raw["button"], "button", name))
    web = _web(_Checker(raw["web"], "web", name))
    tunes = _tunes(raw["tunes"], name)
    tournament = _tournament(_Checker(raw["tournament"], "tournament", name))
    configured_dir = _Checker(raw, "", name).text("data_dir")
    chosen = Path(data_dir) if data_dir else Path(configured_dir) if configured_dir else None
    config = Config(
        data_dir=chosen or default_data_dir(),
        reader=reader,
        signals=signals,
        button=button,
        web=web,
        tunes=tunes,
        source=Path(path) if path else None,
        tournament=tournament,
    )
    _check_clashes(config, name)
    return config


def _read(path: str | Path | None, name: str) -> dict[str, Any]:
    """The shipped defaults with the file at ``path`` (if any) merged over them."""
    defaults = tomllib.loads(default_text())
    if path is None:
        return defaults
    try:
        user = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return _merge(defaults, user, "", name)


def _reader(r: _Checker) -> ReaderConfig:
    reader = ReaderConfig(
        kind=r.text("kind", READER_KINDS),
        attacker_pins=r.pins("attacker_pins"),
        defender_pins=r.pins("defender_pins"),
        debounce_ms=r.integer("debounce_ms", 1, 500),
        invalid_after_ms=r.integer("invalid_after_ms", 100, 10_000),
        i2c_bus=r.integer("i2c_bus", 0, 20),
        i2c_address=r.integer("i2c_address", 0x20, 0x27),
        interrupt_pin=r.pin("interrupt_pin"),
        attacker_port=r.text("attacker_port"),
        defender_port=r.text("defender_port"),
        removal_timeout_ms=r.integer("removal_timeout_ms", 60, 5000),
        mcu_port=r.text("mcu_port"),
        # One of the RC522's six gains: McuReader checks (config loads no hardware module).
        rx_gain_db=r.integer("rx_gain_db", 18, 48),
    )
    if len(reader.attacker_pins) != len(reader.defender_pins):
        raise ConfigError(
            f"{r.name}: 'reader.attacker_pins' and 'reader.defender_pins' differ in length"
        )
    return reader


def _signals(s: _Checker) -> SignalsConfig:
    return SignalsConfig(
        attacker_led=s.pin("attacker_led"),
        defender_led=s.pin("defender_led"),
        status_led=s.pin("status_led"),
        buzzer_pin=s.pin("buzzer_pin"),
        buzzer_kind=s.text("buzzer_kind", BUZZER_KINDS),
        battle_phrase=s.flag("battle_phrase"),
    )


def _button(b: _Checker) -> ButtonConfig:
    return ButtonConfig(b.pin("new_game_pin"), b.number("hold_seconds", 0.5, 10.0))


def _web(w: _Checker) -> WebConfig:
    pin = w.text("admin_pin")
    if pin:
        try:
            check_pin_format(pin, "'web.admin_pin'")
        except PinFormatError as exc:
            raise ConfigError(f"{w.name}: {exc}") from None
    return WebConfig(
        host=w.text("host"),
        port=w.integer("port", 1, 65535),
        admin_pin=pin or None,
        stream_capacity=w.integer("stream_capacity", 1, 2000),
        request_timeout=w.number("request_timeout", 1.0, 300.0),
    )


def _tunes(table: dict[str, Any], name: str) -> dict[str, str]:
    tunes: dict[str, str] = {}
    for key, text in table.items():
        if not isinstance(text, str):
            raise ConfigError(f"{name}: 'tunes.{key}' must be an RTTTL string")
        tunes[key] = text
    try:
        load_tunes(tunes)
    except RtttlError as exc:
        raise ConfigError(f"{name}: 'tunes': {exc}") from None
    missing = [t for t in REQUIRED_TUNES if t not in tunes]
    if missing:  # only possible if the shipped file lost one
        raise ConfigError(f"{name}: 'tunes' lacks {', '.join(missing)}")
    return tunes


def _tournament(t: _Checker) -> TournamentSettings:
    try:
        return TournamentSettings.build(
            t.text("broker"), t.text("event"), t.text("table"),
            password_file=t.text("password_file"), ca_file=t.text("ca_file"),
            keepalive=t.integer("keepalive", 5, 3600),
        )
    except SettingsError as exc:
        raise ConfigError(f"{t.name}: 'tournament': {exc}") from None


def _check_clashes(config: Config, name: str) -> None:
    seen: dict[int, str] = {}
    for role, pin in config.gpio_pins().items():
        if pin in seen:
            raise ConfigError(f"{name}: GPIO {pin} is used for both {seen[pin]} and {role}")
        seen[pin] = role
