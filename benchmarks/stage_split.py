#!/usr/bin/env python3
"""Where one ``gputui check --json`` spends its time, by stage, over every thread.

Runs the check as a child under ``py-spy record --gil``: py-spy samples, at a fixed rate,
the stack of whichever thread holds the GIL (so the list threads, the page fetchers and the
main thread are all seen, and a sample is CPU time spent in Python or in C called from
it, such as msgspec's decoder). Each sample is put in one stage by the outermost frame of
its stack that names one (:data:`ENTRIES`); the time no thread held the GIL is the wall
time less the samples: the process waiting on the server or the socket.

Stages: ``start`` (interpreter start and imports), ``transfer`` (HTTP: reading and
parsing responses), ``decode`` (JSON to shaped objects), ``clean`` (the sanitiser and its
checks), ``reduce`` (shaped objects to what the cache keeps, and the cache's indexes),
``build`` (the snapshot: inputs, findings), ``output`` (the JSON report), ``other``
(connecting, discovery, anything unnamed).

    python benchmarks/stage_split.py --kubeconfig KCFG [--checkout DIR] [--rate 250]

Needs ``py-spy`` (``pip install py-spy``); falls back to none and says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STAGES = ("start", "transfer", "decode", "clean", "reduce", "build", "output", "other")
#: (file name ending, function) -> stage; the outermost frame that matches decides
ENTRIES: dict[tuple[str, str], str] = {
    **{("sources/http.py", f): "transfer" for f in ("_fetch", "get", "_open", "_read_all")},
    **{("sources/decode.py", f): "decode" for f in (
        "_decode_page", "_page_item_by_item", "decode_items", "_decode_items")},
    **{("sources/decode.py", f): "clean" for f in (
        "_cleaned", "clean_objects", "_plain", "page_is_clean", "raw_is_clean")},
    **{("sources/decode.py", f): "reduce" for f in (
        "finish_node", "finish_operator_pod", "finish_gpu_pod", "finish", "_read_pod",
        "reduce_with")},
    **{("sources/cache.py", f): "reduce" for f in ("replace", "apply_pending", "apply")},
    ("domain/sanitize_json.py", "json_is_clean"): "clean",
    ("sources/cache.py", "build_inputs"): "build",
    ("domain/snapshot.py", "build"): "build",
    **{("gputui/check.py", f): "output" for f in ("_check_json", "render_table")},
}
#: files whose frames, when no entry matched, are still clearly one stage
FALLBACK: tuple[tuple[str, str], ...] = (
    ("sanitize.py", "clean"), ("sanitize_json.py", "clean"), ("urllib3/", "transfer"), ("http/client.py", "transfer"),
    ("socket.py", "transfer"), ("ssl.py", "transfer"), ("sources/decode.py", "reduce"),
    ("sources/reflector.py", "reduce"), ("sources/reduce.py", "reduce"),
    ("gputui/domain/", "build"))


def _frame_parts(frame: str) -> tuple[str, str]:
    """``Class.func (path/file.py:12)`` -> (path, func): the function's own name."""
    name, _, where = frame.partition(" (")
    return where.rsplit(":", 1)[0], name.strip().rsplit(".", 1)[-1]


def stage_of(stack: str) -> str:
    """The stage of one collapsed stack (root first, ``;``-separated)."""
    frames = [_frame_parts(f) for f in stack.split(";")]
    if frames[-1][1] in ("list_pages", "_decoded") and frames[-1][0].endswith("sources/http.py"):
        # the page's decoder has returned and its frame is gone: what is left is freeing
        # the decoded page it built (its shaped objects), a cost of decoding
        return "decode"
    if any(path.startswith("<frozen importlib") for path, _ in frames):
        return "start"  # importing a module, at start or on first use
    for path, name in frames:
        for (ending, function), stage in ENTRIES.items():
            if name == function and path.endswith(ending):
                return stage
    for path, _ in reversed(frames):
        for part, stage in FALLBACK:
            if part in path:
                return stage
    return "other"


def split_check(env: dict[str, str], workdir: Path, rate: int = 250) -> dict[str, float]:
    """Seconds per stage of one ``gputui check --json`` (plus ``wall`` and ``no GIL``);
    empty when py-spy is not installed."""
    spy = shutil.which("py-spy")
    if spy is None:
        return {}
    out = workdir / f"spy-{time.monotonic_ns()}.txt"
    began = time.perf_counter()
    subprocess.run([spy, "record", "--gil", "--rate", str(rate), "--format", "raw",
                    "-o", str(out), "--", sys.executable, "-m", "gputui", "check", "--json"],
                   env=env, cwd=env["PYTHONPATH"],  # ``-m`` imports from the cwd first
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - began
    seconds = dict.fromkeys(STAGES, 0.0)
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack:
            seconds[stage_of(stack)] += int(count) / rate
    seconds["wall"] = wall
    seconds["no GIL"] = max(0.0, wall - sum(seconds[s] for s in STAGES))
    return seconds


def median_of(splits: list[dict[str, float]]) -> dict[str, float]:
    """Each stage's median over several splits (one run swings with the machine's load);
    how many is kept as ``runs``."""
    if not splits or not splits[0]:
        return {}
    result = {key: statistics.median(s[key] for s in splits) for key in splits[0]}
    result["runs"] = len(splits)
    return result


def print_split(title: str, split: dict[str, float]) -> None:
    if not split:
        print(f"\nstage split ({title}): py-spy not installed (pip install py-spy)")
        return
    wall = split["wall"]
    runs = int(split.get("runs", 1))
    print(f"\nstage split of check ({title}; py-spy --gil, median of {runs} run(s), wall "
          f"{wall:.2f} s under the profiler)")
    for stage in (*STAGES, "no GIL"):
        print(f"  {stage:<10} {split[stage]:6.2f} s  {100 * split[stage] / wall:5.1f} %")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--checkout", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--rate", type=int, default=250)
    parser.add_argument("--runs", type=int, default=3, help="runs whose median is printed")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="gputui-split-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTUI_")}
    env.update(PYTHONPATH=args.checkout, KUBECONFIG=args.kubeconfig,
               XDG_CONFIG_HOME=str(workdir))
    try:
        print_split(args.checkout, median_of([split_check(env, workdir, args.rate)
                                              for _ in range(max(1, args.runs))]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
