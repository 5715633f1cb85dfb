"""XIDs for the ``xid-error`` finding: from Prometheus when configured, else the exporters.

XIDs live only in metrics (``DCGM_FI_DEV_XID_ERRORS``, whose value is the *last* XID seen,
labelled ``err_code``/``err_msg``), not in any Kubernetes object. Prometheus answers for
the whole fleet in one query; without it each node's dcgm-exporter is scraped through the
API server's pod proxy, which is fine for a few hundred nodes and too much for thousands
(about 30 KB per node), so above :data:`MAX_EXPORTER_SCRAPES` gputui says it skipped them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import urllib3

from gputui.domain.inputs import WHEN_UNKNOWN, ClusterObjects, XidEvent
from gputui.sources.errors import SourceError
from gputui.sources.http import KubeHttp

METRIC = "DCGM_FI_DEV_XID_ERRORS"
EXPORTER_APP = "nvidia-dcgm-exporter"
EXPORTER_PORT = 9400
#: above this many exporter pods, scraping each one is skipped (use Prometheus)
MAX_EXPORTER_SCRAPES = 256
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class XidReading:
    """What was found and how: ``origin`` is ``prometheus``, ``exporters`` or ``skipped``."""

    xids: Mapping[str, tuple[XidEvent, ...]] = field(default_factory=dict)
    origin: str = "exporters"
    note: str = ""


def parse_exposition(text: str) -> list[dict[str, str]]:
    """Label sets (plus ``value``) of the non-zero XID series in a ``/metrics`` body."""
    found = []
    for line in text.splitlines():
        if not line.startswith(METRIC + "{"):
            continue
        labels_text, _, value = line.rpartition("}")
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\")
                  for k, v in _LABEL.findall(labels_text)}
        labels["value"] = value.strip().split(" ")[0]
        found.append(labels)
    return found


def _event(labels: Mapping[str, str], when: float) -> XidEvent | None:
    """One series as an :class:`XidEvent`; ``None`` when it carries no XID (value 0)."""
    try:
        code = int(float(labels.get("err_code") or labels.get("value") or 0))
        gpu = int(labels.get("gpu") or 0)
    except (ValueError, OverflowError):  # garbage, NaN, or +Inf (valid exposition text)
        return None
    if code <= 0:
        return None
    return XidEvent(gpu=gpu, xid=code, when=when, message=labels.get("err_msg", ""))


def _group(pairs: Iterable[tuple[str, XidEvent]]) -> dict[str, tuple[XidEvent, ...]]:
    grouped: dict[str, list[XidEvent]] = {}
    for node, event in pairs:
        grouped.setdefault(node, []).append(event)
    return {node: tuple(sorted(events, key=lambda e: e.gpu)) for node, events in grouped.items()}


def exporter_pods(objects: ClusterObjects) -> list[tuple[str, str, str]]:
    """(namespace, pod, node) of the running dcgm-exporter pods on GPU nodes."""
    pods = []
    for (namespace, name), pod in objects.pods.items():
        labels = (pod.get("metadata") or {}).get("labels") or {}
        node = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        if labels.get("app") == EXPORTER_APP and node in objects.nodes and phase == "Running":
            pods.append((namespace, name, str(node)))
    return pods


#: seconds one exporter scrape may take: a hung exporter must not hold the XID read
SCRAPE_TIMEOUT = 10.0


def scrape_exporters(http: KubeHttp, objects: ClusterObjects, now: float,
                     workers: int = 16) -> XidReading:
    """Scrape each exporter through the pod proxy (unreachable exporters are skipped)."""
    pods = exporter_pods(objects)
    if len(pods) > MAX_EXPORTER_SCRAPES:
        return XidReading(origin="skipped", note=f"{len(pods)} exporters: not scraped, "
                                                 "pass --prometheus-url")

    def scrape(target: tuple[str, str, str]) -> list[tuple[str, XidEvent]]:
        namespace, name, node = target
        path = (f"/api/v1/namespaces/{quote(namespace)}/pods/"
                f"{quote(name)}:{EXPORTER_PORT}/proxy/metrics")
        try:
            text = http.get_text(path, timeout=SCRAPE_TIMEOUT, patient=False)
        except SourceError:
            return []
        events = (_event(labels, now) for labels in parse_exposition(text))
        return [(node, event) for event in events if event is not None]

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gputui-xid") as pool:
        results = list(pool.map(scrape, pods))
    return XidReading(_group(pair for result in results for pair in result), "exporters")


def query_prometheus(url: str, now: float, timeout: float = 10.0) -> XidReading:
    """One instant query for every non-zero XID series in the fleet.

    Raises:
        SourceError: Prometheus unreachable or answering an error.
    """
    endpoint = url.rstrip("/") + "/api/v1/query"
    try:
        response = urllib3.PoolManager().request(
            "GET", endpoint, fields={"query": f"{METRIC} != 0"}, timeout=timeout, retries=False)
        document: Any = response.json()
    except (urllib3.exceptions.HTTPError, ValueError) as error:
        raise SourceError(f"cannot query Prometheus at {url}: {error}") from None
    if response.status != 200 or not isinstance(document, dict) or \
            document.get("status") != "success":
        said = document.get("error", "error") if isinstance(document, dict) else "not JSON"
        raise SourceError(f"Prometheus at {url} answered {response.status}: {said}")
    return XidReading(_group(prometheus_pairs(document, now)), "prometheus")


def prometheus_pairs(document: Mapping[str, Any], now: float) -> list[tuple[str, XidEvent]]:
    """(node, XID) of each series in a query answer; malformed series are skipped."""
    data = document.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    pairs = []
    for series in result if isinstance(result, list) else []:
        if not isinstance(series, dict) or not isinstance(series.get("metric"), dict):
            continue
        labels = {str(k): str(v) for k, v in series["metric"].items()}
        value = series.get("value")
        labels["value"] = str(value[1]) if isinstance(value, list) and len(value) > 1 else "0"
        node = labels.get("Hostname") or labels.get("hostname") or labels.get("node")
        event = _event(labels, now)
        if node and event is not None:
            pairs.append((node, event))
    return pairs


def read_xids(http: KubeHttp, objects: ClusterObjects, now: float,
              prometheus_url: str | None = None) -> XidReading:
    """XIDs by node, from Prometheus when a URL is set, else from the exporters."""
    if prometheus_url:
        return query_prometheus(prometheus_url, now)
    return scrape_exporters(http, objects, now)


class XidTracker:
    """XIDs for the live source: re-read periodically, each stamped when first seen.

    The gauge only says "the last XID on this GPU was N", so the first read that shows a
    (node, GPU, XID) is as close as gputui gets to when it happened; later reads keep that
    time. XIDs already there at the first successful read happened at some unknown time
    before gputui started: they keep :data:`~gputui.domain.inputs.WHEN_UNKNOWN`. Read
    failures keep the previous answer (metrics are an extra, not the stream).
    """

    def __init__(self, http: KubeHttp, prometheus_url: str | None = None):
        self.http = http
        self.prometheus_url = prometheus_url
        self.current: Mapping[str, tuple[XidEvent, ...]] = {}
        self._first_seen: dict[tuple[str, int, int], float] = {}
        self._read_once = False

    def refresh(self, objects: ClusterObjects, now: float) -> bool:
        """Read again; True when the set of XIDs changed."""
        try:
            reading = read_xids(self.http, objects, now, self.prometheus_url)
        except SourceError:
            return False
        stamp = now if self._read_once else WHEN_UNKNOWN
        self._read_once = True
        seen: dict[tuple[str, int, int], float] = {}
        pairs = []
        for node, events in reading.xids.items():
            for event in events:
                key = (node, event.gpu, event.xid)
                seen[key] = self._first_seen.get(key, stamp)
                pairs.append((node, XidEvent(event.gpu, event.xid, seen[key], event.message)))
        changed = set(seen) != set(self._first_seen)
        self._first_seen = seen
        if changed:
            self.current = _group(pairs)
        return changed
