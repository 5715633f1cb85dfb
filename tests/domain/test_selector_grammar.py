"""One table of label-selector cases through both parsers: the domain's lenient one (policy
selectors, the ``/`` filter) and the emulated API server's strict one. They must agree on every
well-formed selector; on a malformed one the server answers 400 and the domain does not raise."""

from __future__ import annotations

import pytest

from gputui.domain.selectors import filter_terms, matches
from gputui.sim.errors import ApiError
from gputui.sim.selectors import parse_label_selector

LABELS = {"app": "trainer", "pool": "a100", "nvidia.com/gpu.deploy.driver": "false"}

#: (selector, matches LABELS)
WELL_FORMED = [
    ("", True),
    ("app=trainer", True),
    ("app==trainer", True),
    ("app!=trainer", False),
    ("app!=server", True),
    ("app", True),
    ("!app", False),
    ("!tier", True),
    ("tier", False),
    ("pool in (a100,h100)", True),
    ("pool in (h100)", False),
    ("pool notin (h100, l40s)", True),
    ("tier notin (batch)", True),
    ("app=trainer,pool in (a100, h100)", True),
    ("app=trainer,pool=h100", False),
    ("nvidia.com/gpu.deploy.driver=false", True),
    ("nvidia.com/gpu.deploy.driver!=false", False),
]

MALFORMED = ["app=trainer=x", "=x", "pool in a100"]


@pytest.mark.parametrize(("selector", "expected"), WELL_FORMED)
def test_domain_and_emulated_server_agree(selector: str, expected: bool) -> None:
    assert matches(selector, LABELS) is expected
    assert parse_label_selector(selector)(LABELS) is expected


@pytest.mark.parametrize("selector", MALFORMED)
def test_malformed_selectors_are_refused_by_the_server_only(selector: str) -> None:
    with pytest.raises(ApiError):
        parse_label_selector(selector)
    assert isinstance(matches(selector, LABELS), bool)


def test_filter_terms_keep_set_requirements_whole() -> None:
    assert filter_terms("h100 pool in (a100, h100),zone=x !gpu.deploy") == [
        "h100", "pool in (a100, h100)", "zone=x", "!gpu.deploy"]
