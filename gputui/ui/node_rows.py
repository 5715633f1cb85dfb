"""What the node list shows, as plain data: columns, cell text, sort values and the filter.

Kept apart from the widget (no textual import) so it is cheap to test and so the widget only
patches its table. Cells are plain strings plus a colour *role* (``crit``, ``warn``...);
the widget turns roles into theme styles.

Filter syntax (``/``): terms separated by spaces or commas, all must match. Label terms use
the domain's selector grammar (:mod:`gputui.domain.selectors`): ``key=value``,
``key==value``, ``key!=value``, ``key in (a, b)``, ``key notin (a, b)``, ``!key``; a term with a
``/`` or ``.`` that names an existing label key matches nodes carrying that key; any other
term is free text, matched (case-insensitive) against the name, the GPU product and every
``key=value`` label.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gputui.domain.fleet import usable
from gputui.domain.model import Finding, NodeView
from gputui.domain.selectors import filter_terms, is_requirement, requirement
from gputui.ui.render.style import (
    HELD_LOOK,
    SEVERITY_ROLE,
    SEVERITY_SHORT,
    SEVERITY_SYMBOL,
    UNKNOWN_ROLE,
    UNKNOWN_WORD,
    mig_look,
    upgrade_look,
)


@dataclass(frozen=True)
class Column:
    """One node-list column: stable key (the table's column key), header label."""

    key: str
    label: str


COLUMNS: Final = (
    # what an operator triages by comes first, so 80 columns show name, state and finding;
    # the metrics column follows the finding (empty until a metrics source answers)
    Column("mark", " "), Column("name", "NAME"), Column("status", "STATUS"),
    Column("gpus", "GPUS"), Column("finding", "FINDING"), Column("util", "UTIL"),
    Column("upgrade", "UPGRADE"),
    Column("driver", "DRIVER"), Column("product", "GPU"), Column("mig", "MIG"),
    Column("sharing", "SHARING"),
)
#: the columns a narrow terminal may drop, most important first (the last goes first);
#: the mark, the name and the worst finding are always shown
DROP_ORDER: Final = ("gpus", "status", "util", "upgrade", "product", "driver", "mig",
                     "sharing")
ALWAYS_SHOWN: Final = frozenset({"mark", "name", "finding"})
#: columns filled from metrics, not from the snapshot (and so not sortable)
METRIC_COLUMNS: Final = ("util",)
SORTABLE: Final = tuple(c.key for c in COLUMNS if c.key not in ("mark", *METRIC_COLUMNS))
#: a row's utilisation cell before (or without) a metrics reading
NO_UTIL: Final = ("", "muted")

#: A cell: text and a colour role ("" for none).
Cell = tuple[str, str]


def _product(product: str) -> str:
    """``NVIDIA-H100-80GB-HBM3`` -> ``H100-80GB-HBM3``: the vendor is the same on every row."""
    return product.removeprefix("NVIDIA-") or "-"


def _status(view: NodeView) -> Cell:
    """``Ready``, ``NotReady``, plus ``,Cordoned`` (kubectl's 24-character
    ``SchedulingDisabled`` pushed the FINDING column off an 80-column screen)."""
    text = "Ready" if view.ready else "NotReady"
    if view.cordoned:
        text += ",Cordoned"
    return text, ("" if view.ready and not view.cordoned else ("warn" if view.ready else "crit"))


def _gpu_counts(view: NodeView) -> tuple[int, int]:
    """Allocatable and capacity GPUs, as the GPUS cell shows them (none allocatable on a
    NotReady node, as the header counts: :func:`gputui.domain.fleet.usable`)."""
    entry = view.resources.get("nvidia.com/gpu")
    if entry is not None:
        return usable(view, entry.allocatable), max(entry.capacity, view.gpu_count)
    if view.resources.entries:
        return usable(view, view.resources.allocatable), view.resources.capacity
    return 0, view.gpu_count


def _gpus(view: NodeView) -> Cell:
    allocatable, capacity = _gpu_counts(view)
    role = "crit" if allocatable < capacity else ""
    return f"{allocatable}/{capacity}", role


def _mig(view: NodeView) -> Cell:
    if not (view.mig_capable or view.mig_config):
        return "-", "muted"
    config = view.mig_config or "?"
    state = view.mig_state or ""
    look = mig_look(state)  # a settled state is the config alone, uncoloured
    return (config if look.settled else f"{config} {state}"), look.list_role


def _sharing(view: NodeView) -> Cell:
    if view.sharing_strategy in ("", "none"):
        return "-", "muted"
    return f"{view.sharing_strategy} x{view.sharing_replicas}", ""


def queue_findings(findings: Sequence[Finding]) -> dict[str, Finding]:
    """Node -> the worst cluster-wide finding that names it in ``Finding.nodes`` (a stalled
    upgrade queue is said once, and each waiting node's row points to it)."""
    named: dict[str, Finding] = {}
    for finding in findings:
        if finding.node is not None:
            continue
        for name in finding.nodes:
            held = named.get(name)
            if held is None or finding.severity.rank > held.severity.rank:
                named[name] = finding
    return named


def requeue(old: Mapping[str, Finding], findings: Sequence[Finding],
            dirty: set[str]) -> tuple[dict[str, Finding], set[str]]:
    """:func:`queue_findings` of ``findings``, and ``dirty`` plus the nodes whose entry
    differs from ``old`` (their rows need patching though their node views did not change)."""
    new = queue_findings(findings)
    return new, dirty | {n for n in new.keys() | old.keys() if new.get(n) != old.get(n)}


def _finding(view: NodeView, queued: Finding | None = None) -> Cell:
    """The node's worst finding, or the cluster finding naming it when that is worse (its
    row then points to the one finding the findings view shows)."""
    if view.loading:  # pods still being listed: "ok" would be a guess
        return "… loading", "progress"
    worst = max(view.findings, key=lambda f: f.severity.rank, default=None)  # first wins ties
    extra = len(view.findings) - 1
    if queued is not None and (worst is None or queued.severity.rank > worst.severity.rank):
        worst, extra = queued, len(view.findings)
    if worst is None and (view.unknown or view.health_unknown):
        return UNKNOWN_WORD, UNKNOWN_ROLE  # nothing found in what could be read
    if worst is None:
        return "✔ ok", "ok"
    more = f" +{extra}" if extra > 0 else ""
    sev = worst.severity
    return f"{SEVERITY_SYMBOL[sev]} {SEVERITY_SHORT[sev]} {worst.code}{more}", SEVERITY_ROLE[sev]


def _upgrade(view: NodeView) -> Cell:
    state = view.upgrade_state or "-"
    if view.upgrade_skip:
        return f"{state} ({HELD_LOOK.word})", HELD_LOOK.role
    return state, upgrade_look(view.upgrade_state).list_role


CELLS: Final[Mapping[str, Callable[[NodeView], Cell]]] = {
    "name": lambda v: (v.name, ""),
    "status": _status,
    "product": lambda v: (_product(v.product), "" if v.product else "muted"),
    "gpus": _gpus,
    "driver": lambda v: (v.driver_version or "-", "" if v.driver_version else "muted"),
    "upgrade": _upgrade,
    "mig": _mig,
    "sharing": _sharing,
    "finding": _finding,
}


#: a GPU metric cell whose metrics could not be read: unknown, not blank
UNREAD_UTIL: Final = ("?", UNKNOWN_ROLE)


def no_util(view: NodeView) -> Cell:
    """The utilisation cell of a row without a reading: ``?`` when the node's metrics
    could not be read (its GPU health is unknown), else blank (not read yet, or none)."""
    return UNREAD_UTIL if view.health_unknown else NO_UTIL


def util_cell(util: float | None) -> Cell:
    """The node list's utilisation cell: a one-character bar and the percentage."""
    if util is None:
        return NO_UTIL
    from gputui.ui.render.sparkline import bar

    return f"{bar(util, 0.0, 100.0) or ' '}{util:4.0f}%", ("muted" if util < 5 else "")


def node_cells(view: NodeView, queued: Finding | None = None) -> dict[str, Cell]:
    """Every data cell of ``view``'s row (the mark column is the widget's business);
    ``queued``: the cluster finding naming the node (:func:`queue_findings`), if any."""
    cells = {key: fn(view) for key, fn in CELLS.items()}
    if queued is not None:
        cells["finding"] = _finding(view, queued)
    return cells


def _gpu_ratio(view: NodeView) -> float:
    allocatable, capacity = _gpu_counts(view)
    return allocatable / capacity if capacity else 1.0


#: what each column's cell sorts by (the cell carries it); rows that tie go by name
CELL_SORT_KEYS: Final[Mapping[str, Callable[[NodeView], Hashable]]] = {
    "name": lambda v: v.name,
    "status": lambda v: (v.ready, not v.cordoned),
    "product": lambda v: v.product,
    "gpus": _gpu_ratio,
    "driver": lambda v: v.driver_version,
    "upgrade": lambda v: v.upgrade_state,
    "mig": lambda v: (v.mig_config or "", v.mig_state or ""),
    "sharing": lambda v: (v.sharing_strategy, v.sharing_replicas),
    # worst first when ascending: that is the order an on-call operator wants by default
    # an unknown row sorts between the rows with findings and the healthy ones
    "finding": lambda v: (-(v.worst.rank if v.worst else 0.5 if v.unknown or v.health_unknown
                            else 0),
                          -len(v.findings)),
}


def cell_sort_key(column: str, view: NodeView, queued: Finding | None = None) -> Hashable:
    """The sort key ``view``'s cell in ``column`` carries (``queued`` as for
    :func:`node_cells`): what the cell means, never parsed back from its text."""
    if column == "finding" and queued is not None:
        rank = max(view.worst.rank if view.worst else 0, queued.severity.rank)
        return -rank, -len(view.findings) - 1
    return CELL_SORT_KEYS[column](view)


def cell_sort_keys(view: NodeView, queued: Finding | None = None) -> dict[str, Hashable]:
    """:func:`cell_sort_key` of every column of :func:`node_cells` at once (the widget's
    path: one call per row, not one per cell)."""
    keys = {key: fn(view) for key, fn in CELL_SORT_KEYS.items()}
    if queued is not None:
        keys["finding"] = cell_sort_key("finding", view, queued)
    return keys


def sort_value(column: str, view: NodeView, queued: Finding | None = None) -> tuple[Any, ...]:
    """The row's sort key for ``column``: its cell's key, then the name (a total order)."""
    key = cell_sort_key(column, view, queued)
    return (key,) if column == "name" else (key, view.name)


def sort_columns_for(column: str) -> tuple[str, ...]:
    """The table's sort columns to sort by ``column``: it, then the name, so every order is
    total and the same however the rows came in."""
    return (column,) if column == "name" else (column, "name")


Predicate = Callable[[NodeView], bool]


#: between two labels in :class:`LabelTexts`: a control character the sanitiser escapes in
#: anything read, so no label holds it and no match spans two labels
LABEL_SEPARATOR = "\x00"


class LabelTexts:
    """Each node's labels as one lower-cased ``key=value`` text, kept while its labels
    object is the same (the domain builder reuses it for an unchanged node).

    Why: a text filter looks for the typed text in every label of every node; formatting
    and lower-casing ~60 labels a node again for each filter cost 0.3 s at 5,000 nodes.
    """

    def __init__(self) -> None:
        self._texts: dict[str, tuple[Mapping[str, str], str]] = {}

    def __len__(self) -> int:
        return len(self._texts)

    def of(self, view: NodeView) -> str:
        """``view``'s labels, lower-cased, one ``key=value`` after another."""
        kept = self._texts.get(view.name)
        if kept is not None and kept[0] is view.labels:
            return kept[1]
        try:  # joined and lower-cased in C: a tenth of formatting label by label
            text = LABEL_SEPARATOR.join(map("=".join, view.labels.items())).lower()
        except TypeError:  # a key or value that is not a string (read as such, shown so)
            text = LABEL_SEPARATOR.join([f"{k}={v}".lower() for k, v in view.labels.items()])
        self._texts[view.name] = (view.labels, text)
        return text

    def keep_only(self, nodes: Container[str]) -> None:
        """Forget the nodes that left the cluster."""
        self._texts = {name: kept for name, kept in self._texts.items() if name in nodes}


def _text_term(term: str, labels: LabelTexts | None) -> Predicate:
    needle = term.lower()

    def match(view: NodeView) -> bool:
        if needle in view.name.lower() or needle in view.product.lower():
            return True
        if labels is not None and LABEL_SEPARATOR not in needle:
            return needle in labels.of(view)
        return any(needle in f"{k}={v}".lower() for k, v in view.labels.items())
    return match


def _term(term: str, labels: LabelTexts | None) -> Predicate:
    if is_requirement(term):
        matches = requirement(term)
        return lambda view: matches(view.labels)
    text = _text_term(term, labels)
    if "/" in term or "." in term:
        return lambda view: term in view.labels or text(view)
    return text


@dataclass(frozen=True)
class NodeFilter:
    """A parsed ``/`` filter plus the findings-only toggle; the empty filter shows all."""

    text: str = ""
    findings_only: bool = False

    @property
    def active(self) -> bool:
        """Whether anything is hidden by it."""
        return bool(self.text.strip()) or self.findings_only

    def predicate(self, named: Collection[str] = (), labels: LabelTexts | None = None) -> Predicate:
        """A function telling whether a node passes; ``named``: nodes a cluster finding
        names (:func:`queue_findings`), which count as having findings; ``labels``: the
        nodes' label texts kept from the last filter."""
        terms = [_term(t, labels) for t in filter_terms(self.text)]
        only = self.findings_only

        def keep(view: NodeView) -> bool:
            if only and not view.findings and view.name not in named:
                return False
            return all(term(view) for term in terms)
        return keep


__all__ = ["ALWAYS_SHOWN", "COLUMNS", "DROP_ORDER", "SORTABLE", "Cell", "Column", "LabelTexts", "NodeFilter", "cell_sort_key", "cell_sort_keys",
           "node_cells",
           "queue_findings", "requeue", "sort_columns_for", "sort_value"]
