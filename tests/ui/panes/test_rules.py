"""The panes keep the project's rules: colours from the theme only, no cluster IO in the UI."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PANES = [*sorted((ROOT / "gputui/ui/render").glob("*.py")),
         *(ROOT / "gputui/ui/widgets" / f"{name}.py" for name in (
             "pipeline", "node_detail", "metrics_pane", "mig_layout", "upgrade_lanes",
             "palette_mixin")),
         *(ROOT / "gputui/ui/screens" / f"{name}.py" for name in ("upgrades", "mig", "pod_log"))]
STYLES = [ROOT / "styles" / f"{name}.tcss" for name in ("detail", "upgrades", "mig", "pod_log")]


def test_no_hex_colours_and_no_cluster_io_in_the_panes() -> None:
    for path in PANES:
        source = path.read_text()
        assert not re.search(r"#[0-9a-fA-F]{6}\b", source), path
        assert not re.search(r"^\s*(import|from)\s+(kubernetes|requests|urllib|aiohttp|http)\b",
                             source, re.MULTILINE), path
        assert len(source.splitlines()) <= 400, path


def test_stylesheets_use_theme_variables_and_prefix_their_rules() -> None:
    prefixes = {"detail": ("PipelinePane", "NodeDetail", "MetricsPane"),
                "upgrades": (".upgrades-screen",), "mig": (".mig-screen",),
                "pod_log": (".pod-log-screen",)}
    for path in STYLES:
        css = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.DOTALL)
        assert not re.search(r"#[0-9a-fA-F]{3,8}\b\s*;", css), path
        for selector in re.findall(r"^([^\s{}][^{]*)\{", css, re.MULTILINE):
            for part in selector.split(","):
                assert part.strip().startswith(prefixes[path.stem]), (path, part)
