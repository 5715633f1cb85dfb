"""The vocabulary every action shares: what it targets, what it would change, what it did.

Why one shape for every action: the operator must never wonder what a key press will do. So
an action never writes straight away; it first returns a :class:`Plan` (the targets, each
exact API change with its kubectl equivalent, the impact gputui can compute, the risks), the
one confirmation dialog shows that plan, a server-side dry run checks it, and only then does
:meth:`Action.apply` carry it out, reporting :class:`Progress` as it goes and ending with a
:class:`Result`. The UI, the palette, ``?`` help and the README key table are all generated
from the registry of these objects (:mod:`gputui.actions.registry`).

No textual here, and no HTTP either: writes go through a :class:`ClusterWriter`, which the
sources implement over the real ``kubernetes`` client (tests use the same one against the
emulated API server).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from gputui.domain.model import ClusterSnapshot

# defined with the sources (which raise it and may not import actions), part of this vocabulary
from gputui.sources.errors import WriteError
from gputui.sources.identity import ServerIdentity

__all__ = ["Action", "Cancel", "Change", "ClusterWriter", "ParamSpec", "Permission", "Plan", "PlansFromServer", "Progress",
           "ProgressCallback", "Result", "Risk", "Scope", "WriteError"]

JsonObj = dict[str, Any]


class Scope(str, enum.Enum):
    """Where an action applies."""

    #: the marked nodes when any are marked, else the node under the cursor
    NODES = "nodes"
    #: the whole cluster (ClusterPolicy, NVIDIADriver): no node targets
    CLUSTER = "cluster"


class Risk(str, enum.Enum):
    """How careful the confirmation must be."""

    #: reversible, no workload touched (cordon, uncordon, a label that only adds)
    SAFE = "safe"
    #: pods are evicted or terminated, GPUs go away: the dialog opens with focus on Cancel
    DESTRUCTIVE = "destructive"
    #: changes every node (driver version, upgrade policy): the operator types a value
    CLUSTER_WIDE = "cluster-wide"


@dataclass(frozen=True)
class Permission:
    """One verb on one resource an action needs (checked up front with SelfSubjectAccessReview).

    ``group`` is ``""`` for the core group; ``subresource`` e.g. ``"eviction"`` for pods.
    """

    verb: str
    resource: str
    group: str = ""
    subresource: str = ""

    def describe(self) -> str:
        """``patch nodes``, ``create pods/eviction``, ``patch clusterpolicies.nvidia.com``."""
        name = self.resource + (f"/{self.subresource}" if self.subresource else "")
        if self.group:
            name += f".{self.group}"
        return f"{self.verb} {name}"


#: what every node-level change needs (labels, cordon, MIG configs)
PATCH_NODES = Permission("patch", "nodes")


@dataclass(frozen=True)
class Change:
    """One write the plan will send, exactly as it will be sent.

    Attributes:
        verb: ``patch``, ``create`` (evictions) or ``delete``.
        kind: the object kind (``Node``, ``ClusterPolicy``, ``NVIDIADriver``, ``Pod``).
        name: object name; ``namespace`` for namespaced kinds.
        body: the patch or create body (a JSON merge patch, a JSON patch list, an Eviction).
        patch_type: ``merge``, ``json`` or ``strategic`` (only for ``patch``).
        resource_version: sent as a precondition when set (409 on a stale plan).
        kubectl: the equivalent kubectl command, one line, for the dialog and the audit log.
        summary: one line for people (``label nvidia.com/gpu.deploy.driver: true -> false``).
    """

    verb: str
    kind: str
    name: str
    body: Any
    kubectl: str
    summary: str
    namespace: str | None = None
    patch_type: str = "merge"
    resource_version: str | None = None


@dataclass(frozen=True)
class Plan:
    """What an action would do, computed from a snapshot, before anything is sent.

    Attributes:
        action_id: the registry id of the action that made it.
        title: one line for the dialog's title (``Cordon 3 nodes``).
        targets: node names (empty for cluster-wide actions).
        changes: every write, in order; a multi-step action (drain, the MIG safe path, the
            canary) lists its first writes here and describes the rest in ``steps``.
        steps: what happens, in order, in words (``1. cordon  2. evict 4 pods ...``).
        impact: what gputui can compute of the consequences (GPU pods evicted and whose,
            nodes made unavailable against ``maxUnavailable``...).
        warnings: findings that make it risky (the last healthy node of a pool...).
        risk: how careful the dialog must be.
        confirm_text: for cluster-wide changes, what the operator must type to confirm.
        blocked: why it cannot run at all (read-only, denied, nothing to do); shown instead
            of a confirm button.
        params: the parameters the plan was made with (new version, label value...).
        caveats: what the apply will stop short of with these parameters, said by the
            dialog beside a passed dry run (``the drain will cordon and then stop (2 pods
            refused)``); each action fills it, so the dialog knows no action.
    """

    action_id: str
    title: str
    targets: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()
    steps: tuple[str, ...] = ()
    impact: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    risk: Risk = Risk.SAFE
    confirm_text: str | None = None
    blocked: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    caveats: tuple[str, ...] = ()
    #: the snapshot the plan was made from, so that an apply refused with 409 (the object
    #: changed since) can re-plan against the re-read object; never shown or logged
    basis: ClusterSnapshot | None = field(default=None, repr=False, compare=False)

    @property
    def kubectl(self) -> tuple[str, ...]:
        """The equivalent kubectl commands, one per change."""
        return tuple(change.kubectl for change in self.changes)


@dataclass(frozen=True)
class Progress:
    """A report from a running apply: ``done`` of ``total`` with what is happening now.

    ``blocked`` lists what cannot go on until someone acts (``train-0: refused by
    PodDisruptionBudget trainer-pdb``, slots held by a failed node); ``waiting`` lists what
    only waits its turn (``n07: waiting for a slot (1 of 1 in use)``, a job still running):
    "blocked" is kept for what an operator must fix.
    ``glance`` is the action's own few words for the header's running line (``3/5 evicted,
    1 refused by budget trainer-pdb, try 4``); empty: the header uses ``message``.
    """

    message: str
    done: int = 0
    total: int = 0
    blocked: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()
    glance: str = ""

    def lines(self) -> tuple[str, ...]:
        """The detail lines under the message, as every view of a progress shows them:
        what is blocked first (``blocked: ...``), then what waits, each line as said."""
        return (*(f"blocked: {line}" for line in self.blocked), *self.waiting)


class Cancel(threading.Event):
    """A stop request that remembers who asked: ``esc``, ``quit``, ``SIGTERM``, ``SIGHUP``...

    Why not a bare :class:`threading.Event`: the audit log's outcome line must say that an
    action was interrupted and by what, and an SSH drop reads very differently from an
    operator pressing escape in a postmortem. It stays an Event, so every ``cancel.wait()``
    and ``cancel.is_set()`` in the actions keeps working.
    """

    def __init__(self) -> None:
        super().__init__()
        self.reason: str | None = None

    def stop(self, reason: str) -> None:
        """Ask the action to stop; the first reason given is the one kept."""
        if self.reason is None:
            self.reason = reason
        self.set()


@dataclass(frozen=True)
class Result:
    """How an apply ended. ``error`` quotes the server's reason in one sentence."""

    ok: bool
    summary: str
    error: str | None = None
    #: per-target or per-pod outcomes, one line each, for the notification and the audit log
    details: tuple[str, ...] = ()
    #: True when the operator stopped it (escape) before the end
    cancelled: bool = False
    #: what stopped it when it did not run to its end (:attr:`Cancel.reason`: ``esc``,
    #: ``quit``, ``SIGTERM``, ``SIGHUP``...); the audit outcome line's ``interrupted``
    interrupted: str | None = None
    #: True when the server answered 409 (an object changed since the plan): the UI
    #: re-reads, re-plans and asks again
    conflict: bool = False
    #: the plan re-made from the re-read object when the action could do that itself
    #: (the UI shows this one instead of re-planning from its snapshot)
    replan: Plan | None = None
    #: nodes it cordoned and left cordoned without finishing (a stopped or failed drain):
    #: the outcome says so and the dialog offers to uncordon them
    cordoned: tuple[str, ...] = ()


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class ParamSpec:
    """One value the operator gives before the plan is made (a label value, a version...).

    The dialog asks for each in order: a pick list when ``choices`` offers values for the
    targets (MIG configs the node's MIG manager offers, sharing configs from the device
    plugin's ConfigMap), else free text. ``validate`` returns a one-line error or ``None``;
    nothing is planned, let alone sent, until every value validates.
    """

    name: str
    prompt: str
    choices: Callable[[ClusterSnapshot, Sequence[str]], tuple[str, ...]] | None = None
    validate: Callable[[str], str | None] | None = None
    default: Callable[[ClusterSnapshot, Sequence[str]], str] | None = None


class ClusterWriter(Protocol):
    """The writes and reads an action needs; implemented in ``gputui.sources`` over the client.

    Every write takes ``dry_run``: ``True`` sends ``dryRun=All`` (the server validates and
    admits but stores nothing). Failures raise :class:`WriteError`.
    """

    context: str
    user: str
    read_only: bool
    #: the API server URL (may carry userinfo: shown only through ``cluster_id``)
    server: str

    def patch(self, change: Change, *, dry_run: bool = False) -> JsonObj:
        """Send one ``patch`` :class:`Change`; returns the object the server answered."""
        ...

    def evict(self, namespace: str, pod: str, *, dry_run: bool = False) -> None:
        """POST an Eviction for one pod; a PDB refusal raises ``WriteError(429, ...)``."""
        ...

    def get(self, kind: str, name: str, namespace: str | None = None) -> JsonObj:
        """Read one object fresh from the server (re-planning after a 409, waiting)."""
        ...

    def list_pods_on_node(self, node: str, label_selector: str = "") -> list[JsonObj]:
        """Every pod bound to ``node`` (field selector ``spec.nodeName``), all namespaces;
        only those matching ``label_selector`` when one is given."""
        ...

    def can_i(self, permission: Permission) -> tuple[bool, str]:
        """SelfSubjectAccessReview: allowed, and the server's reason when not."""
        ...

    def who_am_i(self) -> ServerIdentity | None:
        """SelfSubjectReview: who the server says we are (None: no usable answer)."""
        ...


class Action(Protocol):
    """One thing the operator can do to the cluster; see the module docstring for the flow."""

    #: registry id, also the binding id users remap (``settings.keymap``)
    id: str
    #: short title (footer, palette, help)
    title: str
    #: one sentence: what it does and why you would
    tooltip: str
    #: default keys, comma-separated Textual key names; ``""`` for palette/``:`` only
    keys: str
    #: ``:`` names
    aliases: tuple[str, ...]
    scope: Scope
    risk: Risk
    #: what the server must allow (checked at start-up with SelfSubjectAccessReview)
    permissions: tuple[Permission, ...]
    #: values asked for before planning, in order (empty for cordon, drain...)
    params: tuple[ParamSpec, ...]

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """What it would do to ``targets`` (node names) in ``snapshot``; pure, no IO."""
        ...

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        """Carry ``plan`` out; blocking (the UI runs it in a worker thread).

        Stops between steps when ``cancel`` is set and says what was already done.
        """
        ...


@runtime_checkable
class PlansFromServer(Protocol):
    """An action whose writes depend on what only the server knows now: a drain evicts the
    pods the server lists on the node, not the ones the snapshot shows. The runner calls
    :meth:`server_plan` after :meth:`Action.plan` (in a worker thread: it reads), so that
    the plan, its dry run and the audit log name every write the apply will send."""

    def server_plan(self, plan: Plan, writer: ClusterWriter) -> Plan:
        """``plan`` completed from a fresh read; blocked with the reason if the read fails."""
        ...


class ActionDefaults:
    """Empty defaults for the :class:`Action` fields that a family of actions leaves to each
    member (ids, titles, keys, names, parameters); a family base inherits it and states its
    own ``scope``, ``risk`` and ``permissions``, each member its ``id``, ``title``..."""

    id: str = ""
    title: str = ""
    tooltip: str = ""
    keys: str = ""
    aliases: tuple[str, ...] = ()
    params: tuple[ParamSpec, ...] = ()
