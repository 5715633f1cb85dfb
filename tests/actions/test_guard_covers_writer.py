"""Every request the writer can send goes through the guard and the write log by name.

The guard (cancel and deadline) and the audit's write log wrap the real writer; a request
reached by falling through to it (``__getattr__``) would skip both. So each wrapper writes
every request out, and these tests fail when the writer gains a public method that the
guard's list does not name.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from gputui.actions.base import Cancel, Change, ClusterWriter, Permission
from gputui.actions.guard import NOT_FOR_ACTIONS, REQUESTS, GuardedWriter, WriteInterrupted
from gputui.actions.write_log import WriteLog
from gputui.sources.writer import KubeWriter


def _public_methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")}


def unlisted(writer_class: type) -> set[str]:
    """The writer's public methods that the guard's lists do not name."""
    return _public_methods(writer_class) - REQUESTS - NOT_FOR_ACTIONS


def test_every_public_method_of_the_writer_is_listed() -> None:
    assert unlisted(KubeWriter) == set()
    assert REQUESTS | NOT_FOR_ACTIONS == _public_methods(KubeWriter)  # nothing stale either


def test_a_new_writer_method_without_a_guard_entry_fails_the_check() -> None:
    class WiderWriter(KubeWriter):
        def delete_node(self, name: str) -> None:
            """A write the guard does not know yet."""

    assert unlisted(WiderWriter) == {"delete_node"}


def test_the_protocol_asks_only_for_listed_requests() -> None:
    asked = {name for name in vars(ClusterWriter) if not name.startswith("_")
             and callable(getattr(ClusterWriter, name))}
    assert asked <= REQUESTS


@pytest.mark.parametrize("wrapper", [GuardedWriter, WriteLog])
def test_each_wrapper_writes_every_request_out_and_passes_nothing_through(
        wrapper: type) -> None:
    assert "__getattr__" not in vars(wrapper)
    assert REQUESTS <= set(vars(wrapper)), REQUESTS - set(vars(wrapper))
    assert not NOT_FOR_ACTIONS & set(vars(wrapper))


class _Counting:
    """A writer that counts what reaches it."""

    context, user, read_only, server = "ctx", "me", False, "https://example.invalid"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
        return call


_ARGS: dict[str, tuple[Any, ...]] = {
    "patch": (Change("patch", "Node", "gpu-1", {}, "kubectl cordon gpu-1", "cordon"),),
    "evict": ("ml", "train-0"), "get": ("Node", "gpu-1"), "list_pods_on_node": ("gpu-1",),
    "read_log": ("gpu-operator", "mig-manager-x"), "can_i": (Permission("patch", "nodes"),),
    "who_am_i": (),
}


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_every_request_is_stopped_by_the_cancel(name: str) -> None:
    inner = _Counting()
    cancel = Cancel()
    cancel.stop("esc")
    guarded = GuardedWriter(inner, cancel)  # type: ignore[arg-type]
    with pytest.raises(WriteInterrupted):
        getattr(guarded, name)(*_ARGS[name])
    assert inner.calls == []


def test_a_writer_that_reads_no_logs_refuses_before_sending() -> None:
    """The MIG safe path quotes the manager's log when the writer reads logs; one that does
    not (a test's) answers a refusal the path words as "could not be read", not a crash."""
    from gputui.actions.base import WriteError

    class NoLogs:
        context, user, read_only, server = "ctx", "me", False, ""

    for wrapper in (GuardedWriter(NoLogs(), Cancel()),  # type: ignore[arg-type]
                    WriteLog(NoLogs())):  # type: ignore[arg-type]
        with pytest.raises(WriteError, match="cannot read logs"):
            wrapper.read_log("gpu-operator", "mig-manager-x")
