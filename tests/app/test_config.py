"""The config file: shipped defaults, overrides, and errors that name file and key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from arbiter.app.config import default_text, load_config
from arbiter.app.errors import ConfigError
from arbiter.tunes.defaults import DEFAULT_TUNES


def test_config_defaults_load_and_match_tune_module() -> None:
    config = load_config(None)
    assert config.tunes == dict(DEFAULT_TUNES)
    assert config.reader.kind == "keys-gpio"
    assert len(config.reader.attacker_pins) == 7
    assert config.source is None


def test_config_default_pins_do_not_clash() -> None:
    pins = list(load_config(None).gpio_pins().values())
    assert len(pins) == len(set(pins))
    assert not {2, 3, 14, 15} & set(pins)  # I2C and UART stay free for the other readers


def test_config_override_keeps_other_defaults(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[signals]\nbattle_phrase = false\n[web]\nport = 9000\n')
    config = load_config(path, data_dir=tmp_path)
    assert config.signals.battle_phrase is False
    assert config.web.port == 9000
    assert config.signals.attacker_led == load_config(None).signals.attacker_led
    assert config.data_dir == tmp_path


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[reader]\nkind = "laser"\n', "reader.kind"),
        ("[reader]\ndebounce_ms = -1\n", "reader.debounce_ms"),
        ("[reader]\nattacker_pins = [4, 4, 5, 6, 7, 8, 9]\n", "reader.attacker_pins"),
        ("[signals]\nattacker_led = 99\n", "signals.attacker_led"),
        ('[signals]\nbattle_phrase = "yes"\n', "signals.battle_phrase"),
        ("[signals]\ncolour = 1\n", "signals.colour"),
        ('[web]\nadmin_pin = "12ab"\n', "web.admin_pin"),
        # Arabic-Indic digits: str.isdigit takes them, the PIN rule does not.
        ('[web]\nadmin_pin = "١٢٣٤٥٦"\n', "web.admin_pin"),
        # A new PIN is 6 digits or more (4-digit PINs fell to 40 addresses x 5 guesses).
        ('[web]\nadmin_pin = "2468"\n', "web.admin_pin"),
        ('[web]\nadmin_pin = "12345"\n', "web.admin_pin"),
        ("[web]\nstream_capacity = 0\n", "web.stream_capacity"),
        ("[web]\nrequest_timeout = 0\n", "web.request_timeout"),
        ('[tunes]\nbattle = "x:d=4:zz"\n', "tunes"),
        ("[signals]\nattacker_led = 4\n", "GPIO 4"),
    ],
)
def test_config_errors_name_file_and_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert key in str(info.value)


def test_config_not_toml_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("[reader\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "absent.toml")


def test_config_shipped_file_is_commented_toml() -> None:
    text = default_text()
    assert tomllib.loads(text)["reader"]["kind"] == "keys-gpio"
    assert text.count("#") > 20


def test_config_web_capacity_defaults_and_override(tmp_path: Path) -> None:
    defaults = load_config()
    assert (defaults.web.stream_capacity, defaults.web.request_timeout) == (200, 10.0)
    path = tmp_path / "crowd.toml"
    path.write_text("[web]\nstream_capacity = 50\nrequest_timeout = 4\n")
    config = load_config(path)
    assert (config.web.stream_capacity, config.web.request_timeout) == (50, 4.0)
