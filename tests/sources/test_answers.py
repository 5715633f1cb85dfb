"""Every reader of a remote answer returns a typed value or raises its typed error.

Hypothesis feeds arbitrary JSON values, and near-valid response shapes with arbitrary
values in them, through the real code paths: Prometheus query answers through
:class:`PrometheusMetrics` (only the HTTP call is replaced by the generated answer), exporter
text through the exposition parser and the exporter readers, watch lines through the feed
decoders and the reflector's event handling, Status bodies, and SelfSubjectAccessReview
answers. Nothing may raise anything else: one odd answer once ended a component for good.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputui.actions.base import Permission
from gputui.domain.metrics import node_metrics
from gputui.sources.cache import ObjectCache
from gputui.sources.decode import GPU_PODS, NODES, OPERATOR_PODS, FeedDecoder, decoder_for
from gputui.sources.errors import AnswerError, ApiStatusError, WriteError, status_parts
from gputui.sources.exposition import parse_samples
from gputui.sources.http import _status_error
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.sources.reduce import reduce_plain
from gputui.sources.reflector import Expired, FeedState, Reflector
from gputui.sources.resources import Feed
from gputui.sources.scrape import health_of
from gputui.sources.writer import read_access_review

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=12))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)
#: what a sample value might be: Prometheus' strings, garbage, or any JSON
VALUES = st.one_of(st.sampled_from(["42", "0", "1e3", "NaN", "+Inf", "-Inf", "abc", "", "7.5"]),
                   JSON)
LABELS = st.dictionaries(
    st.sampled_from(["Hostname", "hostname", "gpu", "q", "util", "err_code", "__name__"]),
    st.one_of(st.sampled_from(["node-a", "0", "3", "hottest", "util", "xid", "count",
                               "remap", "48", "x", "NaN"]), JSON), max_size=5)
ROW = st.one_of(st.fixed_dictionaries({"metric": LABELS, "value": st.one_of(
    st.tuples(st.floats(0, 2e9), VALUES).map(list), JSON)}), JSON)
RANGE_ROW = st.one_of(st.fixed_dictionaries({"metric": LABELS, "values": st.one_of(
    st.lists(st.tuples(VALUES, VALUES).map(list), max_size=4), JSON)}), JSON)
RESULT = st.one_of(st.lists(ROW, max_size=5), JSON)


def _prometheus(answer: Any) -> PrometheusMetrics:
    """A PrometheusMetrics whose HTTP calls answer ``answer`` as ``data.result``."""
    metrics = PrometheusMetrics(PrometheusOptions("http://127.0.0.1:9"))
    metrics.client.custom_query = lambda *a, **k: answer  # type: ignore[method-assign]
    metrics.client.custom_query_range = lambda *a, **k: answer  # type: ignore[method-assign]
    return metrics


@PROPERTY
@given(RESULT)
def test_prometheus_instant_answers_read_or_refuse(answer: Any) -> None:
    metrics = _prometheus(answer)
    for read in (lambda: metrics.fleet(1e9, 3600.0), lambda: metrics.node_util(["node-a"], 1e9),
                 lambda: metrics.health(1e9), lambda: metrics.xids(1e9, 3600.0)):
        try:
            result = read()
        except AnswerError as error:
            assert str(error).startswith("Prometheus http://127.0.0.1:9: unreadable answer")
            continue
        assert result is not None


@PROPERTY
@given(st.one_of(st.lists(RANGE_ROW, max_size=4), JSON))
def test_prometheus_range_answers_read_or_refuse(answer: Any) -> None:
    try:
        node = _prometheus(answer).node("node-a", 1e9, 240.0, 2.0)
    except AnswerError:
        return
    for gpu in node.gpus:
        assert all(math.isfinite(v) for _, v in gpu.util + gpu.temp)


def test_a_value_that_is_not_a_number_is_named() -> None:
    answer = [{"metric": {"q": "hottest", "Hostname": "node-a", "gpu": "0"},
               "value": [1e9, "abc"]}]
    with pytest.raises(AnswerError, match="sample value 'abc' is not a number"):
        _prometheus(answer).fleet(1e9, 3600.0)


EXPOSITION = st.one_of(st.text(max_size=80), st.lists(st.sampled_from([
    "# TYPE DCGM_FI_DEV_GPU_TEMP gauge", 'DCGM_FI_DEV_GPU_TEMP{gpu="0"} 41',
    'DCGM_FI_DEV_GPU_TEMP{gpu="x"} NaN', 'DCGM_FI_DEV_XID_ERRORS{gpu="1",err_code="48"} 48',
    'DCGM_FI_DEV_XID_ERRORS{gpu="99999999"} +Inf', 'DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu="ab"} 1',
    'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 1e400', "garbage {", '{gpu="0"} 1']), max_size=6
    ).map("\n".join))


@PROPERTY
@given(EXPOSITION)
def test_exporter_text_reads_or_refuses(text: str) -> None:
    try:
        samples = parse_samples(text)
    except AnswerError:
        return
    assert all(math.isfinite(s.value) for s in samples)
    health_of(samples)  # the readers downstream take whatever parsed
    node_metrics("node-a", [({"__name__": s.name, **s.labels}, [(1.0, s.value)])
                            for s in samples])


class _Listener:
    def feed_state(self, feed: str, state: FeedState, message: str) -> None:
        return None

    def feed_changed(self) -> None:
        return None

    def feed_alive(self) -> None:
        return None


POD_LIKE = st.fixed_dictionaries({"metadata": st.one_of(st.fixed_dictionaries(
    {"name": JSON, "namespace": st.just("gpu-operator"), "resourceVersion": JSON}), JSON),
    "spec": st.one_of(st.just({"containers": None}), JSON), "status": JSON})
EVENT = st.fixed_dictionaries({"type": st.one_of(st.sampled_from(
    ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]), JSON),
    "object": st.one_of(POD_LIKE, JSON)})
DECODERS: list[FeedDecoder[Any]] = [OPERATOR_PODS, GPU_PODS, NODES, decoder_for(reduce_plain)]


@PROPERTY
@given(st.one_of(EVENT, JSON), st.sampled_from(range(len(DECODERS))))
def test_watch_lines_decode_or_refuse_and_the_reflector_takes_them(
        event: Any, which: int) -> None:
    decoder = DECODERS[which]
    try:
        decoded = decoder.event(json.dumps(event).encode())
    except ValueError:
        return
    reflector = Reflector(None, Feed("pods", "/api/v1/pods", reduce_plain),  # type: ignore[arg-type]
                          ObjectCache(), _Listener())
    try:
        reflector._handle(decoded)
    except (Expired, ApiStatusError):
        pass
    if decoded.type == "BOOKMARK":  # read by its resourceVersion alone
        assert set(decoded.object) <= {"metadata"}
        version = decoded.object.get("metadata", {}).get("resourceVersion", "")
        assert reflector.resource_version == version


PAGE = st.fixed_dictionaries({"metadata": st.one_of(st.fixed_dictionaries(
    {"resourceVersion": JSON, "continue": JSON}), JSON), "items": st.one_of(
    st.lists(st.one_of(POD_LIKE, JSON), max_size=3), JSON)})


@PROPERTY
@given(st.one_of(PAGE, JSON), st.sampled_from(range(len(DECODERS))))
def test_list_pages_decode_or_refuse(page: Any, which: int) -> None:
    try:
        decoded = DECODERS[which].page(json.dumps(page).encode())
    except ValueError:
        return
    assert isinstance(decoded.resource_version, str) and isinstance(decoded.continue_token, str)


@PROPERTY
@given(st.one_of(st.fixed_dictionaries({"code": JSON, "reason": JSON, "message": JSON}), JSON))
def test_status_bodies_read_leniently(status: Any) -> None:
    code, reason, message = status_parts(status)
    assert 0 <= code <= 999 and isinstance(reason, str) and isinstance(message, str)
    error = _status_error(403, json.dumps(status).encode())
    assert error.code == 403 and isinstance(error.detail, str)


REVIEW = st.one_of(st.fixed_dictionaries({"status": st.one_of(st.fixed_dictionaries(
    {"allowed": JSON, "reason": JSON}), JSON)}), JSON)


@PROPERTY
@given(REVIEW)
def test_access_review_answers_fail_closed(answer: Any) -> None:
    try:
        allowed, reason = read_access_review(answer, "create pods/eviction")
    except WriteError as error:
        assert error.status == 0 and "access review answer" in error.reason
        return
    assert allowed is (answer["status"]["allowed"] is True)
    assert isinstance(reason, str) and (allowed or reason)


def test_an_odd_review_greys_the_action_with_the_reason() -> None:
    from gputui.actions.permissions import check_permissions

    class Writer:
        read_only = False

        def can_i(self, permission: Permission) -> tuple[bool, str]:
            return read_access_review({"status": {"allowed": "true"}}, permission.describe())

    evict = Permission("create", "pods", subresource="eviction")
    answer = check_permissions(Writer(), [evict])  # type: ignore[arg-type]
    assert answer.answers[evict][0] is False
    assert answer.answers[evict][1].startswith("could not read permission: the access review")


def test_a_reader_bug_marks_the_reading_and_the_metrics_thread_goes_on() -> None:
    import threading

    from gputui.domain.metrics import MetricsReading, MetricsWant
    from gputui.sources.metrics import MetricsFeed
    from gputui.sources.scrape import ExporterMetrics

    class Broken(ExporterMetrics):
        def scrape(self, targets: Any, now: float) -> dict[str, str]:
            raise RuntimeError("a reader's bug")

    feed = MetricsFeed(exporters=Broken(None), refresh=0.01)  # type: ignore[arg-type]
    feed.want(MetricsWant("gpu-1", ("gpu-1",), {"gpu-1": ("gpu-operator", "exporter-0")}))
    readings: list[MetricsReading] = []
    three = threading.Event()
    feed.start(lambda r: (readings.append(r), len(readings) >= 3 and three.set()))
    try:
        assert three.wait(10)  # the loop went on after the first failure
    finally:
        feed.stop()
    assert readings[0].origin.error == ("gputui error reading metrics: RuntimeError: "
                                        "a reader's bug")
