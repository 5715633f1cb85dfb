"""DCGM metrics from Prometheus through ``prometheus-api-client``'s :class:`PrometheusConnect`.

A refresh costs a fixed number of queries whatever the size of the fleet, because Prometheus
aggregates on its side: one query for the fleet figures and the current XIDs (``avg``,
``count``, ``topk`` and ``!= 0`` tagged with ``label_replace`` and joined by ``or``), one for
the XIDs' ages (only when a GPU carries one, and only over those nodes), one for the
utilisation of the nodes on screen, and one range query for the selected node's series.
Both ``Hostname`` (dcgm-exporter releases) and ``hostname`` (its HEAD) name the node.

XID ages come from the series' history: ``min_over_time(timestamp(X != 0)[window:step])``
is the first time within the window that the series carried that XID; one present since the
window's start happened "before" it (:attr:`XidEvent.before`).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import requests
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from urllib3.util.retry import Retry

from gputui.domain.inputs import GpuHealth, XidEvent
from gputui.domain.metrics import (
    BUSY_UTIL,
    GR_ACTIVE,
    NODE_METRICS,
    ROW_REMAP_FAILURE,
    TEMP,
    UTIL,
    FleetMetrics,
    NodeMetrics,
    Series,
    host_of,
    node_metrics,
)
from gputui.domain.sanitize import clean_tree
from gputui.domain.xid import xid_from_series
from gputui.sources.errors import SourceError

XID = "DCGM_FI_DEV_XID_ERRORS"
#: seconds between the points of the XID-age subquery (the age's precision)
XID_STEP = 60
#: window of the fleet line's "XIDs in the last hour"
HOUR = 3600.0
#: the GPUs carrying an XID now. dcgm-exporter labels every XID series with ``err_code``
#: ("0" when none): matching on it uses Prometheus' label index (2 ms at 40,000 GPUs, where
#: comparing every series' value took hundreds); ``!= 0`` still drops an unlabelled zero
CURRENT_XIDS = f'{XID}{{err_code!="0"}} != 0'


@dataclass(frozen=True)
class PrometheusOptions:
    """How to reach Prometheus (``--prometheus-url`` plus the config file's auth settings).

    Attributes:
        url: base URL, e.g. ``https://prometheus.example:9090``.
        token: bearer token (sent as ``Authorization: Bearer``), or "".
        username: basic-auth user ("" for none); ``password`` its password.
        headers: extra HTTP headers (a tenant header for Thanos/Mimir, say).
        ca_cert: CA bundle to verify the server with ("" for the system's).
        client_cert: client certificate (PEM) for mutual TLS; ``client_key`` its key.
        insecure: skip TLS verification (self-signed lab setups only).
        timeout: seconds per request.
    """

    url: str
    token: str = ""
    username: str = ""
    password: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    ca_cert: str = ""
    client_cert: str = ""
    client_key: str = ""
    insecure: bool = False
    timeout: float = 5.0


@dataclass
class Traffic:
    """Queries and response bytes so far (the benchmark reports them per refresh)."""

    queries: int = 0
    bytes: int = 0


_REGEX_SPECIAL = re.compile(r"([.+*?()\[\]{}|^$\\])")


def _selector_any(names: Iterable[str]) -> str:
    """An RE2 alternation matching exactly ``names``, written as a PromQL string body
    (a regex backslash is itself escaped inside the double-quoted string)."""
    return "|".join(_REGEX_SPECIAL.sub(r"\\\\\1", _quote(name)) for name in names)


def _either(build: Callable[[str], str]) -> str:
    """``build("Hostname") or build("hostname")``: both spellings of the node label."""
    return f"({build('Hostname')}) or ({build('hostname')})"


class PrometheusMetrics:
    """Fleet, per-node and XID reads against one Prometheus."""

    def __init__(self, options: PrometheusOptions) -> None:
        self.options = options
        self.traffic = Traffic()
        self._lock = threading.Lock()
        session = requests.Session()
        session.verify = False if options.insecure else (options.ca_cert or True)
        if options.client_cert:
            session.cert = ((options.client_cert, options.client_key) if options.client_key
                            else options.client_cert)
        session.hooks["response"].append(self._count)
        headers = dict(options.headers)
        if options.token:
            headers["Authorization"] = f"Bearer {options.token}"
        auth = (options.username, options.password) if options.username else None
        self.client = PrometheusConnect(
            url=options.url.rstrip("/"), headers=headers or None, disable_ssl=options.insecure,
            retry=Retry(total=0), auth=auth, session=session)

    def _count(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        with self._lock:
            self.traffic.queries += 1
            self.traffic.bytes += len(response.content)

    def close(self) -> None:
        """Close the HTTP session."""
        self.client._session.close()

    # ------------------------------------------------------------------ queries
    def _query(self, promql: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"time": f"{at:.3f}"} if at is not None else None
        try:
            result = self.client.custom_query(promql, params=params,
                                              timeout=self.options.timeout)
        except (requests.RequestException, PrometheusApiClientException, ValueError) as error:
            raise SourceError(f"Prometheus {self.options.url}: {_short(error)}") from None
        return clean_tree(list(result or []))  # type: ignore[no-any-return]

    def _query_range(self, promql: str, start: float, end: float,
                     step: float) -> list[dict[str, Any]]:
        from datetime import datetime

        try:
            result = self.client.custom_query_range(
                promql, start_time=datetime.fromtimestamp(start, UTC),
                end_time=datetime.fromtimestamp(end, UTC), step=f"{max(1, int(step))}s",
                timeout=self.options.timeout)
        except (requests.RequestException, PrometheusApiClientException, ValueError) as error:
            raise SourceError(f"Prometheus {self.options.url}: {_short(error)}") from None
        return clean_tree(list(result or []))  # type: ignore[no-any-return]

    def probe(self) -> None:
        """One cheap query; raises :class:`SourceError` when Prometheus does not answer."""
        self._query("vector(1)")

    # ------------------------------------------------------------------ the fleet
    def fleet(self, now: float, lookback: float) -> FleetMetrics:
        """The fleet line: one query for the figures and the current XIDs, and one more for
        the XIDs' ages only when some GPU carries one.

        Utilisation comes as a histogram of whole percents (``count_values`` over
        ``round``): one pass over every GPU's series gives the count, the busy count and the
        average, where ``avg`` + ``count`` + ``count(>=)`` would walk them three times.
        """
        figures = self._query(
            f'label_replace(count_values("util", round({UTIL})), "q", "util", "", "") '
            f'or label_replace(topk(1, {TEMP}), "q", "hottest", "", "") '
            f'or label_replace({CURRENT_XIDS}, "q", "xid", "", "")', now)
        histogram: dict[float, float] = {}
        hottest: tuple[str, int, float] | None = None
        current: list[dict[str, Any]] = []
        for series in figures:
            labels, value = series.get("metric", {}), float(series["value"][1])
            kind = labels.get("q", "")
            if kind == "hottest":
                hottest = (host_of(labels), int(labels.get("gpu", "0") or 0), value)
            elif kind == "xid":
                current.append(series)
            elif kind == "util":
                histogram[float(labels.get("util", "0"))] = value
        xids = self._aged(current, now, max(lookback, HOUR))
        recent = sum(1 for events in xids.values() for event in events
                     if not event.before and now - event.when <= HOUR)
        gpus = sum(histogram.values())
        busy = sum(n for util, n in histogram.items() if util >= BUSY_UTIL)
        avg = sum(util * n for util, n in histogram.items()) / gpus if gpus else 0.0
        return FleetMetrics("fleet", int(gpus), int(busy), avg, hottest, recent)

    def node_util(self, nodes: Sequence[str], now: float) -> dict[str, float]:
        """Average utilisation of ``nodes`` (the rows on screen), in one query."""
        if not nodes:
            return {}
        names = _selector_any(nodes)
        whole = _either(lambda h: f'avg by ({h}) ({UTIL}{{{h}=~"{names}"}})')
        mig = _either(lambda h: f'100 * avg by ({h}) ({GR_ACTIVE}{{{h}=~"{names}"}})')
        result = self._query(f"{whole} or {mig}", now)
        util: dict[str, float] = {}
        for series in result:
            host = host_of(series.get("metric", {}))
            if host and host not in util:
                util[host] = float(series["value"][1])
        return util

    def node(self, node: str, now: float, window: float, step: float) -> NodeMetrics:
        """The selected node's series over ``window`` seconds, in one range query."""
        names = "|".join(NODE_METRICS)
        query = _either(lambda h: f'{{__name__=~"{names}", {h}="{_quote(node)}"}}')
        result = self._query_range(query, now - window, now, step)
        series: list[Series] = [(row.get("metric", {}), [(float(t), float(v))
                                                         for t, v in row.get("values", [])])
                                for row in result]
        return node_metrics(node, series)

    # ------------------------------------------------------------------ XIDs and health
    def xids(self, now: float, window: float) -> dict[str, tuple[XidEvent, ...]]:
        """Every GPU's current non-zero XID with the first time it was seen in ``window``
        (two queries: the current XIDs, then their history on those nodes only)."""
        return self._aged(self._query(CURRENT_XIDS, now), now, window)

    def _aged(self, current: list[dict[str, Any]], now: float,
              window: float) -> dict[str, tuple[XidEvent, ...]]:
        """The current XID series (instant-query rows) with their first time in ``window``.

        The history subquery reads only the nodes that carry an XID now: evaluated over the
        whole fleet it walks every GPU's series at every step (40,000 x 60 at 5,000 nodes).
        """
        rows = {_series_key(_labels(row)): row for row in current if isinstance(row, dict)}
        hosts = sorted({host_of(_labels(row)) for row in rows.values()} - {""})
        if not hosts:
            return {}
        names, span = _selector_any(hosts), f"{int(window)}s:{XID_STEP}s"
        history = self._query(_either(
            lambda h: f'min_over_time(timestamp({XID}{{{h}=~"{names}"}} != 0)[{span}])'), now)
        return xid_events(rows.values(), history, now, window)

    def health(self, now: float) -> dict[str, GpuHealth]:
        """GPUs reported per node and the GPUs with a failed row remap (one query)."""
        count = _either(lambda h: f"count by ({h}) (count by ({h}, gpu) ({TEMP}))")
        result = self._query(
            f'label_replace({count}, "q", "count", "", "") or '
            f'label_replace({ROW_REMAP_FAILURE} > 0, "q", "remap", "", "")', now)
        counts: dict[str, int] = {}
        remaps: dict[str, set[int]] = {}
        for row in result:
            metric: Mapping[str, str] = row.get("metric", {})
            node = host_of(metric)
            if metric.get("q") == "count":
                counts[node] = int(float(row["value"][1]))
            elif node:
                remaps.setdefault(node, set()).add(int(metric.get("gpu", "0") or 0))
        return {node: GpuHealth(counts.get(node, 0), tuple(sorted(remaps.get(node, ()))))
                for node in counts.keys() | remaps.keys() if node}


def xid_events(current: Iterable[Any], history: Iterable[Any], now: float,
               window: float) -> dict[str, tuple[XidEvent, ...]]:
    """Node -> its GPUs' current XIDs, from the instant rows of the XID series (``current``)
    and the first time each was non-zero in ``window`` (``history``, the same series keys).

    Prometheus answers, or a proxy in front of it, can carry anything: a row that is not the
    expected shape, or whose value is not a finite number, is skipped, never raised.
    """
    firsts: dict[tuple[str, ...], float] = {}
    for row in history:
        first = _value(row)
        if first is not None:
            firsts[_series_key(_labels(row))] = first
    events: dict[str, list[XidEvent]] = {}
    for row in current:
        labels = _labels(row)
        found, node = xid_from_series(labels, _value(row)), host_of(labels)
        if found is None or not node:
            continue
        first = firsts.get(_series_key(labels), now)
        before = first <= now - window + XID_STEP
        events.setdefault(node, []).append(XidEvent(
            found[0], found[1], now - window if before else first,
            labels.get("err_msg", ""), before))
    return {node: tuple(sorted(found, key=lambda e: e.gpu)) for node, found in events.items()}


def _labels(row: Any) -> dict[str, str]:
    metric = row.get("metric") if isinstance(row, dict) else None
    return {str(k): str(v) for k, v in metric.items()} if isinstance(metric, dict) else {}


def _value(row: Any) -> float | None:
    value = row.get("value") if isinstance(row, dict) else None
    return _number(value[1]) if isinstance(value, list) and len(value) > 1 else None


def _number(text: Any) -> float | None:
    """A finite number from a label or sample value, else None."""
    try:
        number = float(text)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _series_key(labels: Mapping[str, str]) -> tuple[str, ...]:
    """A series' identity without its name and gputui's ``q`` tag (functions drop the name)."""
    return tuple(sorted(f"{k}={v}" for k, v in labels.items() if k not in ("__name__", "q")))


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _short(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    if isinstance(error, requests.ConnectionError):
        return "unreachable (connection refused or no route)"
    if isinstance(error, requests.Timeout):
        return "timed out"
    return text[:160]
