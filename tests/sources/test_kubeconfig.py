"""Kubeconfig loading: kubectl's merge rules and one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gputui.sources.errors import SourceError
from gputui.sources.kubeconfig import load_target


def config(context: str, server: str, token: str = "t", current: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server}}],
        "users": [{"name": f"u-{context}", "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": f"u-{context}"}}],
    }
    if current:
        data["current-context"] = context
    return data


def write(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_explicit_file_and_token(tmp_path: Path) -> None:
    path = write(tmp_path / "a", config("a", "https://a.example:6443", token="secret"))
    target = load_target(str(path), environ={})
    assert (target.context, target.server) == ("a", "https://a.example:6443")
    assert target.configuration.api_key["BearerToken"].endswith("secret")


def test_kubeconfig_env_merges_first_wins(tmp_path: Path) -> None:
    """Several files in $KUBECONFIG: first current-context wins, names add up, missing skipped."""
    first = write(tmp_path / "first", config("one", "http://one:1"))
    second = write(tmp_path / "second", config("two", "http://two:2"))
    env = {"KUBECONFIG": f"{first}:{tmp_path / 'missing'}:{second}"}
    assert load_target(environ=env).context == "one"
    assert load_target(context="two", environ=env).server == "http://two:2"


def test_home_default(tmp_path: Path) -> None:
    (tmp_path / ".kube").mkdir()
    write(tmp_path / ".kube" / "config", config("home", "http://home:1"))
    assert load_target(environ={"HOME": str(tmp_path)}).context == "home"


@pytest.mark.parametrize("content, expected", [
    (None, "kubeconfig not found"),
    ("clusters: [unclosed", "is not valid YAML"),
    ("- just\n- a list\n", "is not a kubeconfig"),
])
def test_unreadable_file_is_one_line(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "cfg"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SourceError) as caught:
        load_target(str(path), environ={})
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unknown_context_names_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path / "a", config("prod", "http://prod:1"))
    with pytest.raises(SourceError, match=r"context 'nope' not found .*contexts: prod"):
        load_target(str(path), context="nope", environ={})


def test_no_current_context(tmp_path: Path) -> None:
    path = write(tmp_path / "a", config("prod", "http://prod:1", current=False))
    with pytest.raises(SourceError, match="no current context; pass --context"):
        load_target(str(path), environ={})


def test_nothing_to_load(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no kubeconfig found"):
        load_target(environ={"HOME": str(tmp_path)})


def test_broken_context_entry_is_one_line(tmp_path: Path) -> None:
    data = config("a", "http://a:1")
    data["clusters"] = []
    path = write(tmp_path / "a", data)
    with pytest.raises(SourceError) as caught:
        load_target(str(path), environ={})
    assert "\n" not in str(caught.value) and "'a'" in str(caught.value)
