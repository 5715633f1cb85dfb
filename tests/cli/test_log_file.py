"""The debug log: written where asked, mode 0600, and never a token, client key or header."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from gputui.cli import build_parser, settings_from_args
from gputui.logsetup import REDACTED, configure_logging, redact, remove_logging

SECRETS = {
    "header": ("headers={'Authorization': 'Bearer abc.DEF-123'}", "abc.DEF-123"),
    "raw header": ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    "proxy": ('{"Proxy-Authorization": "Bearer zz9"}', "zz9"),
    "token field": ("user: {token: kubeconfig-token-42}", "kubeconfig-token-42"),
    "exec credential": ('{"status": {"token": "exec-tok-7"}}', "exec-tok-7"),
    "client key": ("client-key-data: LS0tLS1CRUdJTiBSU0Eg", "LS0tLS1CRUdJTiBSU0Eg"),
    "pem": ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBx\n-----END EC PRIVATE KEY-----",
            "MHcCAQEEIBx"),
}


@pytest.fixture
def log_path(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "state" / "gputui.log"
    handler = configure_logging(path)
    try:
        yield path
    finally:
        remove_logging(handler)


@pytest.mark.parametrize("kind", list(SECRETS))
def test_redact_removes_each_kind_of_secret(kind: str) -> None:
    text, secret = SECRETS[kind]
    cleaned = redact(text)
    assert secret not in cleaned and REDACTED in cleaned


def test_ordinary_lines_are_kept() -> None:
    line = "GET http://127.0.0.1:6443/api/v1/nodes?limit=500&continue=eyJ2 -> 429 (1 ms)"
    assert redact(line) == line


def test_the_file_gets_debug_records_but_no_secret(log_path: Path) -> None:
    log = logging.getLogger("gputui.sources.http")
    for text, _ in SECRETS.values():
        log.debug("request with %s", text)
    logging.getLogger("urllib3.connectionpool").debug("sent %s", SECRETS["header"][0])
    try:
        raise ValueError(f"bad answer for {SECRETS['token field'][0]}")
    except ValueError:
        logging.getLogger("gputui.sources.kube").exception("snapshot build failed")
    text = log_path.read_text()
    assert text.count("request with") == len(SECRETS) and "snapshot build failed" in text
    assert "Traceback" in text  # errors keep their traceback, scrubbed too
    for _, secret in SECRETS.values():
        assert secret not in text
    assert stat.S_IMODE(log_path.stat().st_mode) == 0o600


def test_log_file_flag_and_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    args = build_parser().parse_args(["--log-file", "/tmp/x.log"])
    assert settings_from_args(args).log_file == "/tmp/x.log"
    args = build_parser().parse_args(["check", "--log-file", "/tmp/y.log"])
    assert settings_from_args(args).log_file == "/tmp/y.log"
    config = tmp_path / "gputui" / "config.yaml"
    config.parent.mkdir()
    config.write_text("log_file: /tmp/z.log\n")
    assert settings_from_args(build_parser().parse_args([])).log_file == "/tmp/z.log"


def test_unwritable_log_file_is_one_line(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from gputui.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["check", "--log-file", str(blocker / "sub" / "log")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("gputui: cannot write the log file")
    assert len(err.strip().splitlines()) == 1


def test_a_symlink_at_the_log_path_is_refused_not_followed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gputui.cli import main

    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    target.chmod(0o644)
    link = tmp_path / "gputui.log"
    link.symlink_to(target)
    code = main(["check", "--log-file", str(link)])
    err = capsys.readouterr().err
    assert code == 2 and err == f"gputui: the log file {link} is a symbolic link; gputui " \
                                "does not write through one\n"
    assert target.read_text() == "precious\n" and stat.S_IMODE(target.stat().st_mode) == 0o644


def test_an_existing_0644_log_file_is_made_0600_and_a_fifo_is_refused(tmp_path: Path) -> None:
    from gputui.privatefile import PrivateFileError

    path = tmp_path / "gputui.log"
    path.write_text("old\n")
    path.chmod(0o644)
    handler = configure_logging(path)
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        logging.getLogger("gputui.test").debug("new line")
    finally:
        remove_logging(handler)
    assert path.read_text().startswith("old\n") and "new line" in path.read_text()
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    with pytest.raises(PrivateFileError, match="is not a regular file"):
        configure_logging(fifo)  # refused at once: opening a FIFO must not hang gputui
