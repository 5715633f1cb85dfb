"""The five journeys of ``JOURNEYS.md`` with the real binary in tmux at 80x24 (issue 29).

:class:`Journey` is one operator at one terminal: the emulated cluster runs in the test's
process (so :func:`tests.conftest.request_queries` sees every request gputui sends), and
``gputui --kubeconfig`` runs in a private tmux server at 80x24, driven by keys only. Every
key goes through :meth:`Journey.press` or :meth:`Journey.type`, which count them (typed text
one key per character): a journey states its budget and asserts it. Every wait is a poll
for text on the screen (or a line in a file), never a timed assertion.

What each journey checks with it, beside its own steps:

- :meth:`Journey.writes`: the requests that change the cluster (PATCH, PUT, DELETE, and
  POST but the access reviews), applied or dry runs, to assert they name the view's
  selection and nothing else;
- :meth:`Journey.summary`: the handoff text as ``:summary`` then ``y`` copies it (OSC 52
  into tmux's paste buffer, ``set-clipboard on``), read whole; before it,
  :meth:`Journey.plant_other_cluster` writes another cluster's action into the audit log
  (the same context name and server URL, another ``kube-system`` UID: a demo cluster
  rebuilt on the same port), which the summary must leave out;
- :func:`assert_operations`: the summary's "Operations" lines are the journey's actions,
  in order, each with one result, and what was seen after an action is said after it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from gputui.sim.cluster import EmulatedCluster
from tests.helpers import poll
from tests.ui.helpers import REPO, Tmux, gputui_command

#: the terminal every journey runs in (JOURNEYS.md: "works at 80x24 ... keyboard only")
COLUMNS, ROWS = "80", "24"
#: requests that ask the server a question and change nothing
_QUESTIONS = ("/apis/authorization.k8s.io/", "/apis/authentication.k8s.io/")
_ARROWED = re.compile(r"▶\s+(gke-[a-z0-9-]+)")
#: the result the planted action of another cluster carries (never in a summary)
PLANTED = "failed: planted by another cluster's gputui"


def flat(text: str) -> str:
    """The text as one line of single spaces, without the dialog's side borders (a title
    or a change wrapped at 80 columns reads whole)."""
    return " ".join(" ".join(line.strip().strip("│").split()) for line in text.splitlines())


def arrowed(screen: str) -> str | None:
    """The node on the row or card that carries the ``▶`` (where the keys act)."""
    found = _ARROWED.search(screen)
    return found.group(1) if found else None


def row_of(screen: str, node: str) -> str:
    """The screen's line that names ``node`` first ("" when none does)."""
    return next((line for line in screen.splitlines() if node in line), "")


@dataclass(frozen=True)
class Write:
    """One request that changes the cluster: ``PATCH /api/v1/nodes/gpu-1``."""

    method: str
    path: str
    dry_run: bool

    def _parts(self) -> list[str]:
        parts = [p for p in self.path.split("/") if p]
        return parts[:-1] if parts and parts[-1] in ("eviction", "status") else parts

    @property
    def name(self) -> str:
        """The object the path names (``.../pods/NAME/eviction`` -> NAME)."""
        parts = self._parts()
        return parts[-1] if parts else ""

    @property
    def resource(self) -> str:
        """``nodes``, ``pods``, ``clusterpolicies``..."""
        parts = self._parts()
        return parts[-2] if len(parts) >= 2 else ""

    @property
    def eviction(self) -> bool:
        return self.path.endswith("/eviction")


@dataclass
class Journey:
    """One operator at one 80x24 terminal, against one emulated cluster."""

    cluster: EmulatedCluster
    requests: list[tuple[str, str]]
    directory: Path
    term: Tmux = field(default_factory=Tmux)
    #: keys pressed so far (typed text counts one per character)
    keys: int = 0

    @property
    def audit(self) -> Path:
        return self.directory / "audit.jsonl"

    # ------------------------------------------------------------- terminal
    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.term.run(*args)

    def start(self) -> str:
        """``gputui --kubeconfig`` in tmux at 80x24 with its own config and state homes;
        the screen once the header says ``● live`` (actions wait for every list)."""
        if shutil.which("tmux") is None:
            raise AssertionError("tmux not found: run ./scripts/test.sh, which installs it")
        config = self.cluster.write_kubeconfig(self.directory / "kubeconfig")
        home = self.directory
        # TEXTUAL_ANIMATIONS=none: a page key lands on its page at once; animated, a pane
        # passes through the pages between, and a poll for what a page shows can read one
        # of them (under load the scroll takes seconds) and press again, overshooting
        command = (f"cd {REPO} && env -u KUBECONFIG TERM=xterm-256color PYTHONPATH={REPO} "
                   "TEXTUAL_ANIMATIONS=none "
                   f"HOME={home} XDG_CONFIG_HOME={home / 'config'} "
                   f"XDG_STATE_HOME={home / 'state'} {gputui_command()} "
                   f"--kubeconfig {config} --audit-log {self.audit}; "
                   "echo \"gputui exited with $?\"; sleep 120")
        started = self.tmux("new-session", "-d", "-x", COLUMNS, "-y", ROWS, command)
        assert started.returncode == 0, started.stderr
        assert self.tmux("set-option", "-s", "set-clipboard", "on").returncode == 0
        return self.wait(lambda s: "● live" in s and "gke-" in s, timeout=90)

    def stop(self) -> None:
        self.tmux("kill-server")

    def screen(self) -> str:
        return self.term.screen()

    def wait(self, check: Callable[[str], bool] | str, timeout: float = 60.0) -> str:
        """The screen once ``check`` holds for it (a string: it appears on the screen read
        as one line, so a title wrapped at 80 columns matches); fails with the screen."""
        test = (lambda s: check in flat(s)) if isinstance(check, str) else check
        seen = [""]

        def holds() -> bool:
            seen[0] = self.screen()
            return test(seen[0])

        assert poll(holds, timeout, step=0.1), f"waited for {check!r}; the screen:\n{seen[0]}"
        return seen[0]

    def press(self, *keys: str) -> None:
        """Each key alone (tmux names: ``Enter``, ``Down``, ``C-p``, ``y``), counted; one
        write each. After ``Escape`` wait for what it does before the next key: under load
        the terminal can hand ESC and the next key to gputui in one read, which is alt+key
        (``:`` then ``summary`` would type u, m, a, r, y into the node list). And wait for
        something ``Escape`` shows, never for text to go: a notification can hide it."""
        for key in keys:
            result = self.tmux("send-keys", key)
            assert result.returncode == 0, result.stderr
            self.keys += 1

    def type(self, text: str) -> None:
        """``text`` typed literally: one key per character."""
        result = self.tmux("send-keys", "-l", text)
        assert result.returncode == 0, result.stderr
        self.keys += len(text)

    def confirm(self, outcomes: int, timeout: float = 60.0) -> dict[str, Any]:
        """``y`` in the dialog; the audit log's ``outcomes``-th outcome once it is written
        and the dialog has closed (a success closes it; keys typed before then went to it).
        """
        self.press("y")
        return self.done(outcomes, timeout)

    def done(self, outcomes: int, timeout: float = 60.0) -> dict[str, Any]:
        """The ``outcomes``-th outcome, once written and its dialog closed."""
        outcome = self.outcomes(outcomes, timeout)[outcomes - 1]
        self.wait(lambda s: not any(button in s for button in (
            "Confirm (y)", "Stop (esc)", "Background (b)")))
        return outcome

    def command(self, name: str) -> None:
        """``:name`` then Enter, as typed."""
        self.type(f":{name}")
        self.press("Enter")

    def move_to(self, wanted: Callable[[str], bool], key: str = "Down",
                most: int = 30) -> str:
        """Press ``key`` until the node under the ``▶`` is ``wanted`` (at most ``most``
        presses, each waited for); that node."""
        for _ in range(most + 1):
            screen = self.screen()
            here = arrowed(screen)
            if here is not None and wanted(here):
                return here
            self.press(key)
            poll(lambda: arrowed(self.screen()) != here, timeout=10, step=0.1)
        raise AssertionError(f"no wanted node after {most} x {key}:\n{self.screen()}")

    def press_until(self, text: str, key: str, most: int,
                    view: Callable[[str], object]) -> str:
        """Press ``key`` until ``text`` is on the screen, at most ``most`` times; after each
        press, wait until ``text`` shows or ``view`` of the screen (what the key moves:
        the GPUs a page shows) changed. The screen."""
        for _ in range(most):
            screen = self.screen()
            if text in flat(screen):
                return screen
            before = view(screen)
            self.press(key)

            def moved(now: str, was: object = before) -> bool:
                return text in flat(now) or view(now) != was

            self.wait(moved)
        return self.wait(text)

    # --------------------------------------------------------------- checks
    def writes(self, dry_run: bool | None = False) -> list[Write]:
        """The requests so far that change the cluster (access reviews are questions);
        ``dry_run`` False: the ones applied, True: the dry runs, None: both."""
        found = []
        for method, path_qs in list(self.requests):
            if method not in ("PATCH", "PUT", "POST", "DELETE"):
                continue
            parts = urlsplit(path_qs)
            if parts.path.startswith(_QUESTIONS):
                continue
            dry = "All" in parse_qs(parts.query).get("dryRun", [])
            if dry_run is None or dry == dry_run:
                found.append(Write(method, parts.path, dry))
        return found

    def pods_on(self, node: str) -> dict[str, dict[str, Any]]:
        """The pods the server has on ``node`` now, by name."""
        items, _ = self.cluster.store.list("pods", field_selector=f"spec.nodeName={node}")
        return {pod["metadata"]["name"]: pod for pod in items}

    def audit_lines(self) -> list[dict[str, Any]]:
        if not self.audit.exists():
            return []
        return [json.loads(line) for line in self.audit.read_text().splitlines() if line]

    def outcomes(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """The audit log's outcome lines, once there are ``count`` of them."""
        def found() -> list[dict[str, Any]]:
            return [line for line in self.audit_lines() if line.get("phase") == "outcome"]

        assert poll(lambda: len(found()) >= count, timeout), \
            f"{self.audit_lines()}\n{self.screen()}"
        return found()

    def plant_other_cluster(self, node: str, action: str) -> None:
        """Append another cluster's ``action`` on ``node`` to the audit log, stamped now:
        the same context name (every demo cluster is ``gputui-demo``) and server URL, another
        ``kube-system`` UID, as a gputui on a demo cluster rebuilt on this port writes it.
        Its result is :data:`PLANTED`."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        ident = str(uuid.uuid4())
        intent = {"id": ident, "time": now, "phase": "intent", "context": "gputui-demo",
                  "cluster": {"server": self.cluster.url, "uid": str(uuid.uuid4())},
                  "user": "someone-else", "user_source": "server", "action": action,
                  "targets": [node], "change": [], "params": {}, "dry_run": "passed"}
        outcome: dict[str, object] = {
            "id": ident, "time": now, "phase": "outcome", "result": PLANTED, "error": None,
            "done": [], "interrupted": None}
        with self.audit.open("a") as log:
            for line in (intent, outcome):
                log.write(json.dumps(line, separators=(",", ":")) + "\n")

    def summary(self) -> str:
        """``:summary`` then ``y``: the Markdown tmux took into its paste buffer; then
        ``esc`` back to the view."""
        self.tmux("delete-buffer")
        self.command("summary")
        self.wait("Handoff summary (Markdown)")
        self.press("y")
        self.wait("Summary sent to the clipboard", timeout=30)
        assert poll(lambda: "# GPU cluster handoff" in self.tmux("show-buffer").stdout, 30,
                    step=0.1), \
            self.tmux("list-buffers").stdout
        text = self.tmux("show-buffer").stdout
        self.press("Escape")
        self.wait(lambda s: "Handoff summary (Markdown)" not in s)
        return text


def operations(summary: str) -> list[tuple[str, list[str]]]:
    """The summary's "Operations" section: each action's line and the lines under it
    (what was seen after it), Markdown escapes removed; its "Note:" lines left out."""
    assert "## Operations" in summary, summary
    section = summary.split("## Operations", 1)[1].split("\n## ", 1)[0]
    found: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        if line.startswith("- Note: "):
            continue
        if line.startswith("- "):
            found.append((line[2:].replace("\\", ""), []))
        elif line.startswith("  - ") and found:
            found[-1][1].append(line[4:].replace("\\", ""))
    return found


def assert_operations(summary: str, done: Sequence[tuple[str, str, str]]) -> None:
    """The summary is this cluster's only: another cluster's planted action is left out
    and counted as such; its operations are ``done`` ((action, node, the outcome's result)
    in the order done), one line each with that one result; anything seen about a node
    after an action is said under it ("Now, after it"), so a later failure reads as later.
    """
    assert PLANTED not in summary and "someone-else" not in summary, summary
    assert "1 action on other clusters not shown" in flat(summary), summary
    lines = operations(summary)
    assert len(lines) == len(done), lines
    for (line, after), (action, node, result) in zip(lines, done, strict=True):
        assert f"**{action}** on {node} by " in line, (line, action, node)
        assert line.endswith(f": {result}") or f": {result}; error: " in line, (line, result)
        assert all(sub.startswith("Now, after it: ") for sub in after), after
