"""Operations: every applied action, while it runs and after, for this session.

Why a registry apart from the dialog: a drain waits up to its timeout behind a budget and a
canary rolls a pool for an hour; the operator must be able to look elsewhere meanwhile. So
an applied action is an :class:`Operation` (its id is the audit log's UUIDv7 id, written on
the intent line) that lives here, not in a widget: the dialog, the header, ``:ops`` and the
node list only observe it, and closing the dialog with ``b`` leaves it running.

Two operations never act on the same node at once: a plan whose targets a running operation
holds is refused (:meth:`Operations.refuse_held`), and :meth:`Operations.begin` claims the
nodes atomically, so two plans made before either started cannot both run (fail closed).

No textual here: observers are plain callables, told from whichever thread changed the
operation (the UI turns that into a message).
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from gputui.actions.audit import new_id
from gputui.actions.base import Action, Cancel, Plan, Progress, Result
from gputui.actions.runner import DryRun

#: :attr:`Cancel.reason` values that mean the operator stopped it (the dialog's ``esc``,
#: ``x`` in ``:ops``): the operation is *stopped*; any other reason (``quit``, ``SIGTERM``,
#: ``SIGHUP``, an exception) leaves it *interrupted*
OPERATOR_STOPS = ("esc", "x")
#: the most finished operations kept (the oldest go first)
KEEP_FINISHED = 200


class OpState(str, enum.Enum):
    """Where an operation is; every state but ``running`` is final."""

    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"


class NodesHeld(Exception):
    """A node is held by a running operation; ``str()`` is one sentence saying which."""


@dataclass(frozen=True)
class Operation:
    """One applied action of this session, as it is now (a newer copy replaces it on every
    change); read back from the audit log later it is a
    :class:`gputui.domain.operations.AuditedOperation`.

    Attributes:
        id: the audit log's id of its intent and outcome lines (UUIDv7).
        title: the plan's title (``Drain gke-prod-h100-pool-7f3a-svxj``).
        action_id: the registry id of the action (``drain``).
        targets: the nodes it works on (and holds while it runs).
        started: when it started (the app's clock, epoch seconds).
        state: where it is.
        progress: the latest progress report (None until the first).
        result: how it ended (None while running).
        plan: the plan it carries out; ``dry_run`` its dry run (the dialog shows both).
    """

    id: str
    title: str
    action_id: str
    targets: tuple[str, ...]
    started: float
    cancel: Cancel = field(repr=False, compare=False)
    plan: Plan = field(repr=False, compare=False)
    dry_run: DryRun = field(repr=False, compare=False)
    action: Action | None = field(default=None, repr=False, compare=False)
    state: OpState = OpState.RUNNING
    progress: Progress | None = None
    result: Result | None = None

    @property
    def running(self) -> bool:
        return self.state is OpState.RUNNING

    @property
    def stopping(self) -> str | None:
        """Who asked it to stop (``esc``, ``x``, ``quit``...), None when nobody did; it
        still runs until the action sees the stop at its next step."""
        return self.cancel.reason if self.cancel.is_set() else None

    @property
    def lines(self) -> tuple[str, ...]:
        """The live progress lines: what happens now, then what waits and on what."""
        if self.result is not None:
            error = (self.result.error,) if self.result.error else ()
            return (self.result.summary, *error, *self.result.details)
        if self.progress is None:
            return ("starting...",)
        return (self.progress.message, *self.progress.blocked)

    @property
    def verb(self) -> str:
        """The action's first ``:`` name (``drain``, ``canary``), else its id."""
        aliases = getattr(self.action, "aliases", ())
        return str(aliases[0]) if aliases else self.action_id

    def glance(self) -> str:
        """One short line for the header: ``drain svxj 3/5 evicted, 1 refused by budget x``."""
        return f"{self.verb} {short_targets(self.targets)} {self.now()}"

    def now(self) -> str:
        """What it does now, in a few words (the glance without the verb and targets)."""
        if self.stopping and self.running:
            return "stopping..."
        progress = self.progress
        if progress is None:
            return "starting..."
        if progress.glance:
            return progress.glance
        step = f"{progress.done}/{progress.total}: " if progress.total else ""
        return f"{step}{progress.message}"


def short_node(name: str) -> str:
    """``gke-prod-h100-pool-7f3a-svxj`` -> ``svxj``: a long node name's last part, which is
    what tells nodes of one pool apart; short names stay whole."""
    if len(name) <= 12 or "-" not in name:
        return name
    return name.rsplit("-", 1)[1] or name


def short_targets(targets: Sequence[str]) -> str:
    """The header's name for a target list: one node's short name, else a count."""
    if not targets:
        return "cluster"
    if len(targets) == 1:
        return short_node(targets[0])
    return f"{len(targets)} nodes"


def final_state(result: Result) -> OpState:
    """The state a result leaves: done, failed, stopped by the operator, or interrupted."""
    if result.ok:
        return OpState.DONE
    if result.cancelled or result.interrupted:
        return OpState.STOPPED if result.interrupted in OPERATOR_STOPS else OpState.INTERRUPTED
    return OpState.FAILED


Observer = Callable[[Operation], None]


class Operations:
    """This session's operations, newest first; thread-safe.

    Args:
        clock: "now" in epoch seconds (the app's clock: emulated in demo mode, frozen in
            tests): the start time shown.
        id_clock: the wall clock the ids' UUIDv7 time comes from, as the audit log's own
            ids and ``time`` fields do (an emulated clock would sort them out of order).
    """

    def __init__(self, clock: Callable[[], float] = time.time,
                 id_clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._id_clock = id_clock
        self._lock = threading.Lock()
        self._ops: dict[str, Operation] = {}
        self._observers: list[Observer] = []

    def subscribe(self, observer: Observer) -> None:
        """``observer(op)`` after every change, from the thread that made it."""
        self._observers.append(observer)

    # ------------------------------------------------------------------ reading
    def get(self, op_id: str) -> Operation | None:
        with self._lock:
            return self._ops.get(op_id)

    def all(self) -> tuple[Operation, ...]:
        """Every operation of the session, newest first (by start time, then the later
        begun first: a frozen or coarse clock gives two the same start)."""
        with self._lock:
            ops = list(reversed(self._ops.values()))
        return tuple(sorted(ops, key=lambda op: op.started, reverse=True))

    def running(self) -> tuple[Operation, ...]:
        """The running ones, newest first."""
        return tuple(op for op in self.all() if op.running)

    def busy_nodes(self) -> frozenset[str]:
        """Nodes a running operation works on (the node list marks them)."""
        return frozenset(node for op in self.running() for node in op.targets)

    def holder(self, nodes: Iterable[str]) -> Operation | None:
        """The running operation that holds any of ``nodes``, or None."""
        wanted = set(nodes)
        return next((op for op in self.running() if wanted & set(op.targets)), None)

    def refuse_held(self, plan: Plan) -> Plan:
        """``plan``, blocked with the holder's name when a running operation holds one of
        its targets (the dialog then says which, instead of offering ``y``)."""
        why = self._held(plan.targets)
        if why is None or plan.blocked:
            return plan
        return replace(plan, blocked=why)

    def _held(self, targets: Sequence[str]) -> str | None:
        op = self.holder(targets)
        if op is None:
            return None
        nodes = ", ".join(sorted(set(targets) & set(op.targets)))
        return (f"{nodes} is held by the running operation {op.title!r} ({op.id[:8]}); wait "
                "for it or stop it in :ops")

    # ------------------------------------------------------------------ changes
    def begin(self, plan: Plan, dry_run: DryRun, cancel: Cancel,
              action: Action | None = None) -> Operation:
        """Register a running operation for ``plan`` and claim its nodes.

        Raises:
            NodesHeld: a running operation holds one of its targets (nothing is claimed).
        """
        now = self._clock()
        op = Operation(new_id(self._id_clock()), plan.title, plan.action_id, tuple(plan.targets), now,
                       cancel, plan, dry_run, action)
        with self._lock:
            holders = [o for o in self._ops.values() if o.running and set(o.targets) &
                       set(op.targets)]
            if not holders:
                self._ops[op.id] = op
                self._forget_old()
        if holders:
            raise NodesHeld(self._held(plan.targets) or "a node is held")
        self._tell(op)
        return op

    def progressed(self, op_id: str, progress: Progress) -> None:
        """A progress report of a running operation."""
        self._change(op_id, lambda op: replace(op, progress=progress) if op.running else op)

    def finished(self, op_id: str, result: Result) -> None:
        """It ended: done, failed, stopped or interrupted, from ``result``."""
        self._change(op_id, lambda op: replace(op, state=final_state(result), result=result))

    def stop(self, op_id: str, reason: str) -> bool:
        """Ask a running operation to stop (``reason``: ``x``, ``esc``...); False when it is
        not running. The action stops at its next step and the result says what it did."""
        op = self.get(op_id)
        if op is None or not op.running:
            return False
        op.cancel.stop(reason)
        self._tell(op)  # the same operation, now "stopping"
        return True

    def _change(self, op_id: str, how: Callable[[Operation], Operation]) -> None:
        with self._lock:
            op = self._ops.get(op_id)
            if op is None:
                return
            new = how(op)
            self._ops[op_id] = new
        if new is not op:
            self._tell(new)

    def _forget_old(self) -> None:
        """Keep at most :data:`KEEP_FINISHED` finished operations (called under the lock)."""
        done = sorted((op for op in self._ops.values() if not op.running),
                      key=lambda op: op.started)
        for op in done[:max(0, len(done) - KEEP_FINISHED)]:
            del self._ops[op.id]

    def _tell(self, op: Operation) -> None:
        for observer in list(self._observers):
            observer(op)
