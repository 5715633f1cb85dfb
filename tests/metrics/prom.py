"""A real Prometheus (Debian's package) on loopback, optionally with backfilled history.

History is written as OpenMetrics text and turned into TSDB blocks with
``promtool tsdb create-blocks-from openmetrics`` before Prometheus starts on that directory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import free_port

#: (metric, labels, [(epoch seconds, value)])
Backfill = tuple[str, Mapping[str, str], Sequence[tuple[float, float]]]


def openmetrics(series: Iterable[Backfill]) -> str:
    """OpenMetrics text with every sample of a family together, ``# EOF`` last."""
    families: dict[str, list[str]] = {}
    for name, labels, points in series:
        body = ",".join(f'{k}="{v}"' for k, v in labels.items())
        lines = families.setdefault(name, [])
        lines += [f"{name}{{{body}}} {value} {when:.3f}" for when, value in points]
    out = []
    for name, lines in families.items():
        out += [f"# TYPE {name} gauge", *lines]
    return "\n".join(out + ["# EOF"]) + "\n"


@dataclass
class Prometheus:
    """A running Prometheus."""

    proc: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def query(self, promql: str) -> list[dict[str, object]]:
        from urllib.parse import urlencode

        with urllib.request.urlopen(f"{self.url}/api/v1/query?{urlencode({'query': promql})}",
                                    timeout=5) as response:
            return list(json.loads(response.read())["data"]["result"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


def start_prometheus(tmp: Path, scrape_sd: str | None = None,
                     backfill: Iterable[Backfill] = ()) -> Prometheus:
    """Backfill (when given), then start Prometheus and wait until it is ready."""
    binary, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if binary is None or promtool is None:
        pytest.fail("prometheus/promtool not found (Debian package prometheus)")
    tsdb = tmp / "tsdb"
    tsdb.mkdir(parents=True, exist_ok=True)
    series = list(backfill)
    if series:
        source = tmp / "history.om"
        source.write_text(openmetrics(series))
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source),
                        str(tsdb)], check=True, capture_output=True)
    config = tmp / "prometheus.yml"
    text = "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
    if scrape_sd:
        text += ("scrape_configs:\n  - job_name: dcgm-exporter\n"
                 f"    http_sd_configs: [{{url: '{scrape_sd}', refresh_interval: 1s}}]\n")
    config.write_text(text)
    port = free_port()
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{port}",
         f"--storage.tsdb.path={tsdb}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = Prometheus(proc, port)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    pytest.fail("Prometheus did not become ready")
