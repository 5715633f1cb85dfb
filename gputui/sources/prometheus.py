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

import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, TypeVar

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
from gputui.sources.errors import AnswerError, SourceError
from gputui.sources.prom_xids import xid_history
from gputui.sources.promread import (
    RangeRow,
    Row,
    gpu_index,
    instant_rows,
    number,
    range_rows,
    whole,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

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
    def _query(self, promql: str, at: float | None = None) -> list[Row]:
        """An instant query's rows; raises :class:`SourceError` (:class:`AnswerError` when
        Prometheus answered something that is not a vector of numbers)."""
        params = {"time": f"{at:.3f}"} if at is not None else None
        return self._read(lambda: instant_rows(clean_tree(self.client.custom_query(
            promql, params=params, timeout=self.options.timeout))))

    def _query_range(self, promql: str, start: float, end: float, step: float) -> list[RangeRow]:
        from datetime import datetime

        return self._read(lambda: range_rows(clean_tree(self.client.custom_query_range(
            promql, start_time=datetime.fromtimestamp(start, UTC),
            end_time=datetime.fromtimestamp(end, UTC), step=f"{max(1, int(step))}s",
            timeout=self.options.timeout))))

    def _read(self, ask: Callable[[], T]) -> T:
        """Run one query and read its answer; every failure becomes one typed line."""
        try:
            return ask()
        except AnswerError as error:
            log.warning("Prometheus %s: unreadable answer: %s", self.options.url, error)
            raise AnswerError(f"Prometheus {self.options.url}: unreadable answer: {error}"
                              ) from None
        except (KeyError, TypeError, IndexError) as error:
            # the client indexes response.json()["data"]["result"]: another JSON shape
            log.warning("Prometheus %s: answer without data.result: %r", self.options.url,
                        error)
            raise AnswerError(f"Prometheus {self.options.url}: unreadable answer: no "
                              "data.result") from None
        except (requests.RequestException, PrometheusApiClientException, ValueError) as error:
            raise SourceError(f"Prometheus {self.options.url}: {_short(error)}") from None

    def instant(self, promql: str, at: float) -> list[Row]:
        """One instant query's rows at ``at`` (for queries built elsewhere, e.g.
        :mod:`gputui.sources.prom_health`); raises :class:`SourceError`."""
        return self._query(promql, at)

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
            f'or label_replace(count_values("util", round(100 * {GR_ACTIVE}{{GPU_I_ID!=""}})),'
            f' "q", "mig", "", "") '
            f'or label_replace(topk(1, {TEMP}), "q", "hottest", "", "") '
            f'or label_replace({CURRENT_XIDS}, "q", "xid", "", "")', now)
        histogram: dict[float, float] = {}
        mig = 0
        hottest: tuple[str, int, float] | None = None
        current: list[Row] = []
        for labels, value in figures:
            kind = labels.get("q", "")
            if kind == "xid":
                current.append((labels, value))
            elif value is None:  # NaN or Inf: no reading, not an error
                continue
            elif kind == "hottest":
                hottest = (host_of(labels), gpu_index(labels), value)
            elif kind in ("util", "mig"):  # whole GPUs, then MIG devices (GPU instances)
                bucket = number(labels.get("util", "0"))
                if bucket is not None:
                    count = whole(value, "a GPU count")
                    histogram[bucket] = histogram.get(bucket, 0) + count
                    mig += count if kind == "mig" else 0
        xids = self._aged(current, now, max(lookback, HOUR))
        recent = sum(1 for events in xids.values() for event in events
                     if not event.before and now - event.when <= HOUR)
        gpus = sum(histogram.values())
        busy = sum(n for util, n in histogram.items() if util >= BUSY_UTIL)
        avg = sum(util * n for util, n in histogram.items()) / gpus if gpus else 0.0
        return FleetMetrics("fleet", int(gpus), int(busy), avg, hottest, recent, int(mig))

    def node_util(self, nodes: Sequence[str], now: float) -> dict[str, float]:
        """Average utilisation of ``nodes`` (the rows on screen), in one query."""
        if not nodes:
            return {}
        names = _selector_any(nodes)
        whole = _either(lambda h: f'avg by ({h}) ({UTIL}{{{h}=~"{names}"}})')
        mig = _either(lambda h: f'100 * avg by ({h}) ({GR_ACTIVE}{{{h}=~"{names}"}})')
        result = self._query(f"{whole} or {mig}", now)
        util: dict[str, float] = {}
        for labels, value in result:
            host = host_of(labels)
            if host and host not in util and value is not None:
                util[host] = value
        return util

    def node(self, node: str, now: float, window: float, step: float) -> NodeMetrics:
        """The selected node's series over ``window`` seconds, in one range query."""
        names = "|".join(NODE_METRICS)
        query = _either(lambda h: f'{{__name__=~"{names}", {h}="{_quote(node)}"}}')
        series: list[Series] = list(self._query_range(query, now - window, now, step))
        return node_metrics(node, series)

    # ------------------------------------------------------------------ XIDs and health
    def xids(self, now: float, window: float) -> dict[str, tuple[XidEvent, ...]]:
        """Every XID each GPU reported within ``window``, with when it was first and last
        seen, its count and the GPU's pods (two queries: :mod:`gputui.sources.prom_xids`)."""
        return xid_history(self._query, now, window, _selector_any)

    def _aged(self, current: list[Row], now: float,
              window: float) -> dict[str, tuple[XidEvent, ...]]:
        """The current XID series (instant-query rows) with their first time in ``window``.

        The history subquery reads only the nodes that carry an XID now: evaluated over the
        whole fleet it walks every GPU's series at every step (40,000 x 60 at 5,000 nodes).
        """
        rows = {_series_key(labels): (labels, value) for labels, value in current}
        hosts = sorted({host_of(labels) for labels, _ in rows.values()} - {""})
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
        for metric, value in result:
            node = host_of(metric)
            if metric.get("q") == "count":
                counts[node] = whole(value, "a GPU count")
            elif node and value is not None:
                remaps.setdefault(node, set()).add(gpu_index(metric))
        return {node: GpuHealth(counts.get(node, 0), tuple(sorted(remaps.get(node, ()))))
                for node in counts.keys() | remaps.keys() if node}


def xid_events(current: Iterable[Row], history: Iterable[Row], now: float,
               window: float) -> dict[str, tuple[XidEvent, ...]]:
    """Node -> its GPUs' current XIDs, from the instant rows of the XID series (``current``)
    and the first time each was non-zero in ``window`` (``history``, the same series keys).

    The rows were read by :mod:`gputui.sources.promread`; a series whose XID cannot be read
    (a non-finite value, an odd ``err_code``) is skipped.
    """
    firsts: dict[tuple[str, ...], float] = {}
    for labels, first in history:
        if first is not None:
            firsts[_series_key(labels)] = first
    events: dict[str, list[XidEvent]] = {}
    for labels, value in current:
        found, node = xid_from_series(labels, value), host_of(labels)
        if found is None or not node:
            continue
        first = firsts.get(_series_key(labels), now)
        before = first <= now - window + XID_STEP
        events.setdefault(node, []).append(XidEvent(
            found[0], found[1], now - window if before else first,
            labels.get("err_msg", ""), before))
    return {node: tuple(sorted(found, key=lambda e: e.gpu)) for node, found in events.items()}


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
