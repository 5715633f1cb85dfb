"""``list_contexts`` (``:ctx``): kubectl's files and merge rule, the current context marked,
server and user shown, every shown field clean, and never a credential."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gputui.domain.sanitize import clean_line
from gputui.settings import Settings, load_settings
from gputui.sources.contexts import is_read_only, list_contexts, read_only_reason, server_shown
from gputui.sources.errors import SourceError

HOSTILE = "evil\x1b]2;PWNED\x07\u202ectx"


def kubeconfig(path: Path, contexts: list[tuple[str, str, str, str]],
               current: str | None = None) -> Path:
    """A kubeconfig of ``(context, cluster, server, user)`` entries."""
    document: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": c, "cluster": {"server": s}} for _, c, s, _ in contexts],
        "users": [{"name": u, "user": {"token": f"secret-token-of-{u}"}}
                  for *_, u in contexts],
        "contexts": [{"name": n, "context": {"cluster": c, "user": u}}
                     for n, c, _, u in contexts],
    }
    if current:
        document["current-context"] = current
    path.write_text(yaml.safe_dump(document))
    return path


def test_every_context_listed_current_marked_with_server_and_user(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", [
        ("staging", "c-staging", "https://10.0.0.1:6443", "alice"),
        ("prod-eu", "c-prod", "https://admin:hunter2@prod.example:6443", "bob"),
    ], current="prod-eu")
    entries = list_contexts(Settings(kubeconfig=str(path)), environ={})
    assert [(e.key, e.cluster, e.server, e.user, e.current) for e in entries] == [
        ("staging", "c-staging", "https://10.0.0.1:6443", "alice", False),
        ("prod-eu", "c-prod", "https://prod.example:6443", "bob", True),
    ]
    shown = repr(entries)
    assert "hunter2" not in shown and "secret-token" not in shown  # never a credential


def test_the_context_on_screen_is_marked_rather_than_the_files(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", [("a", "a", "http://a", "u"),
                                            ("b", "b", "http://b", "u")], current="a")
    entries = list_contexts(Settings(kubeconfig=str(path)), showing="b", environ={})
    assert [e.key for e in entries if e.current] == ["b"]


def test_merged_files_first_name_wins_as_kubectl(tmp_path: Path) -> None:
    one = kubeconfig(tmp_path / "one", [("shared", "c1", "http://one", "u1")], current="shared")
    two = kubeconfig(tmp_path / "two", [("shared", "c1", "http://two", "u2"),
                                        ("other", "c2", "http://other", "u3")])
    entries = list_contexts(Settings(), environ={"KUBECONFIG": f"{one}:{two}"})
    assert [(e.key, e.server, e.user) for e in entries] == [
        ("shared", "http://one", "u1"), ("other", "http://other", "u3")]


def test_hostile_names_are_cleaned_but_switchable_by_their_own_name(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", [
        (HOSTILE, "cl\x9bster", "https://x\x1b[31m.example", "us\u200ber")])
    (entry,) = list_contexts(Settings(kubeconfig=str(path)), environ={})
    assert entry.key == HOSTILE  # what a switch loads
    for text in (entry.name, entry.cluster, entry.server, entry.user):
        assert text == clean_line(text) and text.isprintable(), text
    assert entry.name == clean_line(HOSTILE) and "\\x1b" in entry.name


def test_read_only_contexts_by_glob_and_by_flag(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", [("prod-eu", "p", "http://p", "u"),
                                            ("staging", "s", "http://s", "u")])
    settings = Settings(kubeconfig=str(path), read_only_contexts=("prod-*",))
    assert [e.read_only for e in list_contexts(settings, environ={})] == [True, False]
    assert is_read_only(settings, "prod-us") and not is_read_only(settings, "Prod-us")
    assert "prod-*" in (read_only_reason(settings, "prod-eu") or "")
    assert read_only_reason(settings, "staging") is None
    flagged = Settings(kubeconfig=str(path), read_only=True)
    assert all(e.read_only for e in list_contexts(flagged, environ={}))


def test_read_only_contexts_from_the_config_file_and_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("read_only_contexts: ['prod-*', '*-eu']\n")
    assert load_settings(config, environ={}).read_only_contexts == ("prod-*", "*-eu")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    from_env = load_settings(empty, environ={"GPUTUI_READ_ONLY_CONTEXTS": "prod-*, dr-?"})
    assert from_env.read_only_contexts == ("prod-*", "dr-?")


def test_an_unreadable_kubeconfig_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("contexts: [\n")
    with pytest.raises(SourceError, match="not valid YAML"):
        list_contexts(Settings(kubeconfig=str(path)), environ={})


def test_server_userinfo_is_dropped() -> None:
    assert server_shown("https://u:p@h:1/x") == "https://h:1/x"
    assert server_shown("https://h:1") == "https://h:1"
