"""app/stopping.py: stop requests through a self-pipe, a watcher that tells a loop, and
console input that ends with the command (no thread left waiting in a read)."""

from __future__ import annotations

import ast
import io
import os
import signal
import threading
from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.app.stopping import StopRequests, interruptible, lines_until
from arbiter.threads import running
from tests.support.rig import write_config


def test_a_signal_reaches_wait_through_the_pipe_and_the_handler_takes_no_lock() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with StopRequests() as requests:
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler) and handler is signal.getsignal(signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt: the pipe carries it
            requests.wait()  # returns: the signal's byte is in the pipe
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_watch_tells_a_loop_of_a_request_from_another_thread() -> None:
    told = threading.Event()
    with StopRequests() as requests:
        watcher = requests.watch(told.set)
        assert watcher in running()
        threading.Thread(target=requests.request).start()
        assert told.wait(5)
    assert not watcher.is_alive()


def test_a_watcher_stopped_first_tells_nothing() -> None:
    told = threading.Event()
    with StopRequests() as requests:
        watcher = requests.watch(told.set)
        assert watcher.stop(5)
    assert not told.is_set()


def test_lines_until_reads_a_pipe_and_ends_when_stopped_while_nothing_comes() -> None:
    read, write = os.pipe()
    stream = os.fdopen(read, encoding="utf-8")
    stopping = threading.Event()
    got: list[str] = []
    done = threading.Event()

    def consume() -> None:
        for line in lines_until(stream, stopping):
            got.append(line)
            if len(got) == 2:
                stopping.set()  # no more input ever comes: the read must still end
        done.set()

    threading.Thread(target=consume, daemon=True).start()
    os.write(write, b"attacker W:5*G\nclear\n")
    assert done.wait(5), "lines_until kept waiting for input after stopping was set"
    assert got == ["attacker W:5*G\n", "clear\n"]
    os.close(write)
    stream.close()


def test_lines_until_gives_the_last_line_at_the_end_of_input() -> None:
    read, write = os.pipe()
    os.write(write, b"q\nno newline")
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as stream:
        assert list(lines_until(stream, threading.Event())) == ["q\n", "no newline"]


def test_lines_until_reads_a_file_or_a_stringio_as_it_is(tmp_path: Path) -> None:
    script = tmp_path / "script.txt"
    script.write_text("a\nb\n", encoding="utf-8")
    with script.open(encoding="utf-8") as stream:
        assert list(lines_until(stream, threading.Event())) == ["a\n", "b\n"]
    assert list(lines_until(io.StringIO("x\ny"), threading.Event())) == ["x\n", "y"]


def test_a_finished_run_leaves_no_background_thread_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`gg-arbiter run --script` in this process: its threads (the device's, the page's,
    the watchdog, the console's) all end when the command returns."""
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    script = tmp_path / "script.txt"
    script.write_text("attacker W:5*G\ndefender B:PVT\n", encoding="utf-8")
    before = set(running())
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = main(["run", "--config", str(config), "--data", str(tmp_path / "data"),
                     "--host", "127.0.0.1", "--port", "0", "--script", str(script)])
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert code == 0
    assert "ATTACKER survives" in capsys.readouterr().out  # the script was played
    assert [t.name for t in set(running()) - before] == []


def test_only_stopping_installs_a_signal_handler() -> None:
    """A handler elsewhere could take a lock (``Event.set``) and hang on a burst of signals."""
    root = Path(__file__).resolve().parents[2]
    found = []
    for path in [*(root / "arbiter").rglob("*.py"), *(root / "web").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("signal", "set_wakeup_fd")
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "signal"):
                found.append(str(path.relative_to(root)))
    assert sorted(set(found)) == ["arbiter/app/stopping.py"]


def test_ctrl_c_at_a_prompt_ends_the_command_at_once() -> None:
    """A PIN prompt's read cannot be ended through the pipe: there, Ctrl-C raises
    KeyboardInterrupt as Python's own handler does; after it, the pipe carries it again."""
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with StopRequests() as requests:
            quiet = signal.getsignal(signal.SIGINT)
            with pytest.raises(KeyboardInterrupt), interruptible():
                os.kill(os.getpid(), signal.SIGINT)
                threading.Event().wait(5)  # the prompt's read; the signal ends it
            assert signal.getsignal(signal.SIGINT) is quiet
            requests.request()
            requests.wait()
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
