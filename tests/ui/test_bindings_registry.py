"""Every binding gputui declares comes from the one command registry, and help lists it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.binding import Binding
from textual.dom import DOMNode

import gputui.ui
from gputui.actions.registry import ACTIONS
from gputui.ui.commands import COMMANDS, binding_scope, bindings_for, command
from gputui.ui.key_table import key_table
from gputui.ui.screens.help import help_rows


def _gputui_classes() -> list[type[DOMNode]]:
    """Every App, Screen and Widget class defined in gputui.ui."""
    found: dict[str, type[DOMNode]] = {}
    for info in pkgutil.walk_packages(gputui.ui.__path__, "gputui.ui."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, DOMNode) and cls.__module__.startswith("gputui.ui"):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


def test_every_declared_binding_is_a_registry_command() -> None:
    classes = _gputui_classes()
    declaring = [cls for cls in classes if "BINDINGS" in cls.__dict__]
    assert len(declaring) >= 8  # app, nodes, findings, panes, dialogs, help...
    for cls in declaring:
        for binding in cls.__dict__["BINDINGS"]:
            assert isinstance(binding, Binding), f"{cls.__name__}: a bare tuple binding"
            assert binding.id, f"{cls.__name__}: binding {binding.key} has no id"
            cmd = command(binding.id)  # KeyError: not in the registry
            assert (binding.key, binding.action, binding.description) == (
                cmd.keys, cmd.action, cmd.title), f"{cls.__name__}: {binding.id} differs"
            # the class binds whole scopes (the app: global, then the replay's keys)
            scopes = dict.fromkeys(binding_scope(command(b.id)) for b in cls.__dict__["BINDINGS"])
            assert cls.__dict__["BINDINGS"] == [b for scope in scopes
                                                for b in bindings_for(scope)]


def test_actions_come_from_the_action_registry_and_help_lists_every_key() -> None:
    for act in ACTIONS:
        cmd = command(act.id)
        assert (cmd.keys, cmd.title, cmd.aliases, cmd.action) == (
            act.keys, act.title, act.aliases, f"act('{act.id}')")
    # bound on the app: each acts on the selection of the view it is pressed in
    assert {b.id for b in bindings_for("global")} >= {"cordon", "uncordon", "drain"}
    listed = {(title, tooltip) for _, _, title, tooltip in help_rows({})}
    for cmd in COMMANDS:
        assert (cmd.title, cmd.tooltip) in listed, f"help misses {cmd.id}"
    assert len(key_table()) == len(COMMANDS)


def test_greyed_actions_say_why_in_help() -> None:
    rows = help_rows({}, {"drain": "denied: create pods/eviction"})
    drain = [tooltip for _, _, title, tooltip in rows if title == "Drain"]
    assert drain and drain[0].endswith("(unavailable: denied: create pods/eviction)")


def test_readme_key_table_is_the_generated_one() -> None:
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    generated = subprocess.run([sys.executable, "scripts/screenshots.py", "--keys"], cwd=repo,
                               capture_output=True, text=True, check=True, timeout=120).stdout
    assert generated.strip() in (repo / "README.md").read_text()
