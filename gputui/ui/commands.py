"""The one registry of commands: it generates key bindings, palette entries, help and ``:`` names.

Why one table: an operator learns gputui from ``?`` and the palette; if a key exists that the
help does not list, or a help line names a key that does nothing, trust is gone. So every
command is declared once here with its id (the binding id users remap in
``settings.keymap``), default keys, title, tooltip, scope and ``:`` aliases; screens take
their ``BINDINGS`` from :func:`bindings_for`, the palette provider and the help screen walk
:data:`COMMANDS`, and ``check_action`` asks :func:`command_for_action`. What is not in the
registry does not exist (STYLE.md rule 5).

Cluster-changing actions (cordon, drain, labels...) are not typed here: they come from the
action registry (:data:`gputui.actions.registry.ACTIONS`), each one a command whose Textual
action is ``act('<id>')``, bound on the app: a node action acts on the selection of the view
the operator is in (:mod:`gputui.ui.selection`), a cluster-wide one on the cluster.
Every one of them goes through the one confirmation dialog (``screens/confirm.py``), whose
own keys (``y``, ``n``, ``esc``) are registry commands too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from textual.binding import Binding, BindingType

from gputui.actions.registry import ACTIONS

#: scopes, in the order help lists them
SCOPES: Final = ("global", "nodes", "actions", "pipeline", "findings", "upgrades", "mig",
                  "joins", "timeline", "contexts", "pod_log", "confirm", "prompt",
                  "command_line", "help", "ops", "ask", "summary", "replay")
SCOPE_TITLES: Final = {"global": "Everywhere", "nodes": "Node list",
                       "actions": "Actions",
                       "pipeline": "Pipeline pane", "findings": "Findings",
                       "upgrades": "Upgrade lanes", "mig": "MIG", "joins": "Time to GPU",
                       "timeline": "Timeline",
                       "contexts": "Contexts (:ctx)", "pod_log": "Pod log",
                       "confirm": "Confirmation dialog", "prompt": "Action prompts",
                       "command_line": "Command line (:)", "help": "Help",
                       "ops": "Operations (:ops)", "ask": "Questions (stop, quit)",
                       "summary": "Handoff summary", "replay": "Replay (gputui replay)"}


@dataclass(frozen=True)
class Command:
    """One thing the operator can do.

    Attributes:
        id: stable binding id; ``settings.keymap`` remaps keys by it.
        keys: default keys, comma-separated Textual key names (``"q,ctrl+q"``).
        title: short label (footer, palette, help).
        tooltip: one sentence saying what it does and why you would.
        scope: ``global`` (app bindings) or a screen name (that screen's bindings).
        action: the Textual action run in that scope (without namespace).
        aliases: names accepted on the ``:`` command line (first one is shown in help).
        show: shown in the footer.
        palette: listed in the command palette.
        priority: the binding wins over a focused widget's own binding of the same key.
    """

    id: str
    keys: str
    title: str
    tooltip: str
    scope: str
    action: str
    aliases: tuple[str, ...] = ()
    show: bool = False
    palette: bool = True
    priority: bool = False


def _c(id: str, keys: str, title: str, tooltip: str, scope: str, action: str,
       aliases: tuple[str, ...] = (), show: bool = False, palette: bool = True,
       priority: bool = False) -> Command:
    return Command(id, keys, title, tooltip, scope, action, aliases, show, palette, priority)


COMMANDS: Final[tuple[Command, ...]] = (
    _c("help", "question_mark", "Help", "List every key and command.", "global", "help",
       ("help", "h", "?"), show=True),
    _c("command_line", "colon", "Command", "Type a view or command (:nodes, :upgrades, :mig, "
       ":findings, :help, :q).", "global", "command_line", show=True),
    _c("palette", "ctrl+p", "Palette", "Search every command by name.", "global",
       "command_palette", palette=False),
    _c("view_nodes", "1", "Nodes", "GPU nodes with their worst finding; Enter for details.",
       "global", "switch_view('nodes')", ("nodes", "no", "node")),
    _c("view_upgrades", "2", "Upgrades", "Driver upgrade lanes, slots and why nodes wait.",
       "global", "switch_view('upgrades')", ("upgrades", "up", "upgrade")),
    _c("view_mig", "3", "MIG", "MIG layouts per node and GPU, config state.", "global",
       "switch_view('mig')", ("mig",)),
    _c("view_findings", "4", "Findings", "Everything wrong, most severe first; Enter jumps "
       "to the node and pane.", "global", "switch_view('findings')",
       ("findings", "fi", "faults")),
    _c("view_ops", "", "Operations", "Running and finished actions of this session, newest "
       "first; enter: live progress, x: stop.", "global", "switch_view('ops')",
       ("ops", "operations")),
    _c("view_joins", "", "Time to GPU", "Join to first allocatable GPU per pool (p50, p90, "
       "max, slowest stage, stragglers); Enter for a pool's nodes.", "global",
       "switch_view('joins')", ("joins", "join", "ttg")),
    _c("view_timeline", "", "Timeline", "What changed and when, newest first: findings "
       "raised and cleared, Ready, cordons, upgrade and MIG states, restarts, XIDs, actions "
       "with who; / filters.", "global", "switch_view('timeline')",
       ("timeline", "tl", "events")),
    _c("view_summary", "", "Handoff summary", "The cluster's state, findings and this "
       "session's operations as Markdown, to review and copy for the next person on call.",
       "global", "summary", ("summary", "handoff")),
    _c("view_ctx", "", "Contexts", "The kubeconfig's contexts (current marked); enter "
       "switches cluster in place, :ctx NAME switches directly.", "global", "contexts",
       ("ctx", "context", "contexts")),
    _c("back", "escape", "Back", "Close this view, or clear the filter and marks.", "global",
       "back"),
    _c("focus_next", "tab", "Next pane", "Move focus to the next pane.", "global",
       "focus_next", palette=False),
    _c("focus_previous", "shift+tab", "Previous pane", "Move focus to the previous pane.",
       "global", "focus_previous", palette=False),
    _c("mark_elsewhere", "space", "Mark (node list)", "Marks live in the node list (1); "
       "elsewhere space says so: there the actions act on the view's selected row.",
       "global", "mark_elsewhere", palette=False),
    _c("theme", "", "Theme", "Pick a colour theme (gputui or a Textual built-in).", "global",
       "change_theme", ("theme",)),
    _c("quit", "q,ctrl+q", "Quit", "Leave gputui (nothing in the cluster changes).", "global",
       "quit", ("q", "quit", "q!"), show=True, priority=False),
    _c("filter", "slash", "Filter", "Filter nodes: free text (name, GPU, labels) and label "
       "selector terms k=v, k!=v, k in (a,b), k notin (a,b), !k, or a label key; all terms "
       "must match.", "nodes", "filter", ("filter",), show=True),
    _c("findings_only", "f,ctrl+z", "Faults only", "Show only nodes with findings.", "nodes",
       "findings_only", show=True),
    _c("mark", "space", "Mark", "Mark or unmark the node (marks survive refresh and filter).",
       "nodes", "mark", show=True),
    _c("clear_marks", "ctrl+backslash", "Clear marks", "Unmark every node.", "nodes",
       "clear_marks"),
    _c("sort_next", "o", "Sort column", "Sort by the next column.", "nodes", "sort_next",
       show=True),
    _c("sort_reverse", "O", "Reverse sort", "Flip the sort order.", "nodes", "sort_reverse"),
    _c("open_detail", "enter", "Details", "Focus the selected node's detail pane.", "nodes",
       "open_detail", palette=False),
    _c("tab_pipeline", "p", "Pipeline", "The node's operand chain: where readiness breaks.",
       "nodes", "show_tab('pipeline')", ("pipeline",)),
    _c("tab_node", "d", "Describe", "The node's labels, resources, GPU pods and findings.",
       "nodes", "show_tab('node')", ("describe", "node")),
    _c("tab_metrics", "m", "Metrics", "The node's DCGM metrics.", "nodes",
       "show_tab('metrics')", ("metrics",)),
    _c("open_log", "l", "Logs", "Log and events of the node's first broken operand pod.",
       "nodes", "open_log", ("logs", "log")),
    _c("node_timeline", "h", "History", "The selected node's timeline: what changed on it "
       "and when (esc there shows every node).", "nodes", "node_timeline"),
    _c("jump", "enter", "Go to", "Jump to the finding's node and pane.", "findings", "jump",
       palette=False),
    _c("findings.detail_down", "shift+down", "Hint down", "Scroll the selected finding's "
       "message and hint down (they wrap; tab moves into them too).", "findings",
       "detail_down", palette=False),
    _c("findings.detail_up", "shift+up", "Hint up", "Scroll the selected finding's message "
       "and hint up.", "findings", "detail_up", palette=False),
    _c("findings.summary", "s", "Summary", "Open the handoff summary (Markdown) to review "
       "and copy.", "findings", "summary", show=True, palette=False),
    _c("pipeline.cursor_up", "up,k", "Prev stage", "Move to the previous stage.", "pipeline",
       "cursor_up", palette=False),
    _c("pipeline.cursor_down", "down,j", "Next stage", "Move to the next stage.", "pipeline",
       "cursor_down", palette=False),
    _c("pipeline.log", "l,enter", "Log", "Open the stage pod's recent log lines and events.",
       "pipeline", "open_log", show=True, palette=False),
    _c("pipeline.events", "e", "Events", "Open the stage pod's events (with its log).",
       "pipeline", "open_events", show=True, palette=False),
    _c("upgrades.open_node", "enter", "Pipeline", "Open the selected node's operand pipeline.",
       "upgrades", "select_cursor", show=True, palette=False),
    _c("mig.cursor_up", "up,k", "Prev node", "Select the previous node.", "mig", "cursor_up",
       palette=False),
    _c("mig.cursor_down", "down,j", "Next node", "Select the next node.", "mig",
       "cursor_down", palette=False),
    _c("mig.open_node", "enter", "Pipeline", "Open the selected node's operand pipeline.",
       "mig", "open_node", show=True, palette=False),
    _c("mig.log", "l", "MIG manager log", "Open the selected node's mig-manager pod log.",
       "mig", "open_log", show=True, palette=False),
    _c("joins.open_pool", "enter", "Nodes", "Show the selected pool's nodes.", "joins",
       "open_pool", palette=False),
    _c("joins.open_node", "p", "Pipeline", "Open the selected node's operand pipeline.",
       "joins", "open_node", show=True, palette=False),
    _c("timeline.filter", "slash", "Filter", "Filter events: words that must all be found "
       "in the node, the text or the user (esc clears, and clears the node chosen).",
       "timeline", "filter", show=True, palette=False),
    _c("contexts.switch", "enter", "Switch", "Show the highlighted context's cluster; "
       "actions running in this one keep running.", "contexts", "switch", show=True,
       palette=False),
    _c("pod_log.close", "escape,q", "Close", "Close the pod log.", "pod_log", "close",
       show=True, palette=False),
    _c("pod_log.reload", "r", "Reload", "Read the log and events again.", "pod_log", "reload",
       show=True, palette=False),
    _c("pod_log.container", "c", "Container", "Show the next container of this pod.",
       "pod_log", "next_container", show=True, palette=False),
    _c("pod_log.wrap", "w", "Wrap", "Wrap long log lines to the pane (the default), or let "
       "them run off to the right (then left/right scroll).", "pod_log", "toggle_wrap",
       show=True, palette=False),
    _c("pod_log.search", "slash", "Search", "Find text in the log (any case): the first "
       "match from the top row down is shown and highlighted.", "pod_log", "search",
       show=True, palette=False),
    _c("pod_log.next_match", "n", "Next match", "Show the next match of the search.",
       "pod_log", "next_match", palette=False),
    _c("pod_log.home", "home", "First line", "Go to the oldest line read.", "pod_log",
       "log_home", palette=False),
    _c("pod_log.end", "end", "Last line", "Go to the newest line.", "pod_log", "log_end",
       palette=False),
    _c("command_line.cancel", "escape", "Cancel", "Close the prompt.", "command_line",
       "cancel", palette=False),
    _c("command_line.complete", "tab", "Complete", "Take the greyed suggestion: the first "
       "command name that starts with what is typed (right arrow does too).", "command_line",
       "complete", palette=False),
    _c("help.close", "escape,q,question_mark", "Close", "Close help.", "help", "dismiss_help",
       show=True, palette=False),
    _c("summary.copy", "y", "Copy", "Copy the summary to the clipboard (OSC 52), or to a "
       "private file when the terminal cannot take it.", "summary", "copy", show=True,
       palette=False),
    _c("summary.close", "escape", "Close", "Close the summary.", "summary", "close",
       show=True, palette=False),
    _c("confirm_yes", "y", "Confirm", "Apply the plan shown (only after a clean dry run).",
       "confirm", "confirm", show=True, palette=False),
    _c("confirm_no", "n,escape", "Cancel", "Close without changing anything; while a drain "
       "runs, stop further evictions.", "confirm", "cancel", show=True, palette=False),
    _c("confirm_options", "o", "Options", "Choose the action's values again (a drain's "
       "options: delete emptyDir data, force) and re-plan; nothing is sent.", "confirm",
       "options", palette=False),
    _c("confirm_quit", "ctrl+q", "Quit", "Stop the running action (what it did is audited) "
       "and leave gputui.", "confirm", "quit", palette=False),
    _c("confirm_background", "b", "Background", "While an action runs: keep it running in "
       "the background and close the dialog (:ops shows it, the header counts it).",
       "confirm", "background", show=True, palette=False),
    _c("confirm_uncordon", "u", "Uncordon", "After a drain that stopped or failed: uncordon "
       "the nodes it left cordoned (a new plan, dry run and y, as ever).", "confirm",
       "uncordon", show=True, palette=False),
    _c("ops.open", "enter", "Progress", "Open the selected operation's live progress (b "
       "closes it again, esc stops it).", "ops", "open_operation", show=True, palette=False,
       priority=True),
    _c("ops.stop", "x", "Stop", "Stop the selected running operation, after a question "
       "(audited as stopped).", "ops", "stop_operation", show=True, palette=False),
    _c("ask.yes", "y", "Yes", "Answer yes (stop the operation, or stop them and quit).",
       "ask", "yes", show=True, palette=False),
    _c("ask.no", "n,escape", "No", "Answer no: nothing is stopped.", "ask", "no",
       show=True, palette=False),
    _c("prompt_cancel", "escape", "Cancel", "Stop asking; nothing is planned or sent.",
       "prompt", "cancel", show=True, palette=False),
    # gputui replay only (gputui/ui/replay_controls.py acts on them, ahead of the views' own
    # space and left/right, but never while a text field or a dialog has the keys)
    _c("replay.play", "space", "Play", "Play the recording from the cursor in real "
       "time, or pause it.", "replay", "replay('toggle')", show=True, palette=False,
       priority=True),
    _c("replay.prev", "left", "Prev change", "Step back to the previous change in the "
       "recording (pauses).", "replay", "replay('prev')", palette=False, priority=True),
    _c("replay.next", "right", "Next change", "Step to the next change in the recording "
       "(pauses).", "replay", "replay('next')", palette=False, priority=True),
    _c("replay.start", "g", "Start", "Jump to the start of the recording.", "replay",
       "replay('start')", palette=False, priority=True),
    _c("replay.end", "G", "End", "Jump to the end of the recording.", "replay",
       "replay('end')", palette=False, priority=True),
    _c("replay.time", "t", "Go to time", "Jump to a time: 14:02:11 (UTC), "
       "2026-12-01T14:02:11Z, +5m from the start or -30s from the end (:at TIME).",
       "replay", "replay('time')", ("at",), palette=False, priority=True),
    _c("replay.faster", "right_square_bracket", "Faster", "Play faster (2x, 4x ... 64x).",
       "replay", "replay('faster')", palette=False, priority=True),
    _c("replay.slower", "left_square_bracket", "Slower", "Play slower (down to 0.25x).",
       "replay", "replay('slower')", palette=False, priority=True),
)


def _action_commands() -> tuple[Command, ...]:
    """One command per registered action, bound on the app (``bindings_for("global")``).

    Their scope in help is "actions"; a node action's targets are the selection of the view
    it is started from (each view answers ``selected_nodes``).
    """
    # not in the footer: at 80 columns it would push out "? Help" (help and the palette
    # list every action, greyed ones with the reason)
    return tuple(Command(act.id, act.keys, act.title, act.tooltip, "actions",
                         f"act('{act.id}')", act.aliases) for act in ACTIONS)


ACTION_COMMANDS: Final = _action_commands()
#: action id -> the screen scope its binding lives in: the app, for every action, since a
#: node action acts on the selection of whichever view the operator is in (an action key
#: bound in the node list only did nothing elsewhere, and ``:`` names switched to the node
#: list and acted on its cursor)
ACTION_SCOPES: Final = {act.id: "global" for act in ACTIONS}
COMMANDS = COMMANDS + ACTION_COMMANDS  # type: ignore[misc]  # one table: typed + generated

_BY_ID: Final = {command.id: command for command in COMMANDS}


def command(command_id: str) -> Command:
    """The command with ``command_id`` (KeyError if none: a typo is a bug)."""
    return _BY_ID[command_id]


def effective_keys(cmd: Command, keymap: Mapping[str, str] | None = None) -> str:
    """The keys ``cmd`` answers to after the user's remaps."""
    return (keymap or {}).get(cmd.id, cmd.keys)


def bindings_for(scope: str) -> list[BindingType]:
    """Textual bindings of one scope; ids let ``App.set_keymap`` remap them."""
    return [Binding(cmd.keys, cmd.action, cmd.title, show=cmd.show, id=cmd.id,
                    tooltip=cmd.tooltip, priority=cmd.priority)
            for cmd in COMMANDS if binding_scope(cmd) == scope and cmd.keys]


def binding_scope(cmd: Command) -> str:
    """Where ``cmd``'s key is bound: its scope, or for an action where its targets are."""
    return ACTION_SCOPES.get(cmd.id, cmd.scope) if cmd.scope == "actions" else cmd.scope


def by_alias(name: str) -> Command | None:
    """The command a ``:`` name means (``nodes``, ``no``, ``q``...), or None."""
    wanted = name.strip().lower()
    for cmd in COMMANDS:
        if wanted in cmd.aliases or wanted == cmd.id:
            return cmd
    return None


def command_for_action(action: str) -> Command | None:
    """The registry entry behind a Textual action name (for ``check_action``)."""
    for cmd in COMMANDS:
        if cmd.action.split("(")[0] == action:
            return cmd
    return None


def palette_commands() -> Iterable[Command]:
    """Commands listed in the palette."""
    return (cmd for cmd in COMMANDS if cmd.palette)


_KEY_NAMES: Final = {"question_mark": "?", "colon": ":", "slash": "/", "escape": "esc",
                     "ctrl+backslash": "ctrl+\\", "space": "space", "enter": "enter",
                     "left_square_bracket": "[", "right_square_bracket": "]"}


def key_label(keys: str) -> str:
    """Human form of a key list: ``"q,ctrl+q"`` -> ``"q ctrl+q"``, ``slash`` -> ``/``."""
    return " ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(",") if k.strip())


__all__ = [
    "ACTION_COMMANDS",
    "COMMANDS",
    "SCOPES",
    "Command",
    "binding_scope",
    "bindings_for",
    "by_alias",
    "command",
    "command_for_action",
    "effective_keys",
    "key_label",
    "palette_commands",
]
