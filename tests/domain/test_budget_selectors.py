"""A PodDisruptionBudget's ``LabelSelector`` object, matched as policy/v1 matches it.

The domain's lenient matcher (``selectors.selector_terms``/``terms_match``) and the emulated
API server's eviction (``sim.budgets.selector_matches``) must agree on every selector the
server accepts: the hint names the budget the server's eviction refused on. Null and empty
differ on purpose (policy/v1: a null selector selects no pod, ``{}`` every pod).
"""

from __future__ import annotations

from typing import Any

import pytest

from gputui.domain.disruption import read_budget
from gputui.domain.selectors import selector_terms, terms_match, terms_text
from gputui.sim.budgets import selector_matches

TRAINER = {"app": "trainer", "tier": "batch"}

#: (selector, labels, matches)
CASES: list[tuple[Any, dict[str, str], bool]] = [
    (None, TRAINER, False),
    ({}, TRAINER, True),
    ({}, {}, True),
    ({"matchLabels": {}}, TRAINER, True),
    ({"matchLabels": {"app": "trainer"}}, TRAINER, True),
    ({"matchLabels": {"app": "trainer", "tier": "web"}}, TRAINER, False),
    ({"matchLabels": {"app": "trainer"}}, {}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["batch", "x"]}]},
     TRAINER, True),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
     TRAINER, False),
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
     TRAINER, False),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]},
     TRAINER, True),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["batch"]}]},
     TRAINER, False),
    # NotIn holds for a pod without the label, as the API server's selector says
    ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]},
     TRAINER, True),
    ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, TRAINER, True),
    ({"matchExpressions": [{"key": "spot", "operator": "Exists"}]}, TRAINER, False),
    ({"matchExpressions": [{"key": "spot", "operator": "DoesNotExist"}]}, TRAINER, True),
    ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, TRAINER, False),
    ({"matchLabels": {"app": "trainer"},
      "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
     TRAINER, False),
]


@pytest.mark.parametrize(("selector", "labels", "matches"), CASES)
def test_the_domain_and_the_emulated_eviction_agree(selector: Any, labels: dict[str, str],
                                                   matches: bool) -> None:
    assert terms_match(selector_terms(selector), labels) is matches
    assert selector_matches(selector, labels) is matches


@pytest.mark.parametrize("selector", [
    {"matchExpressions": [{"key": "app", "operator": "Matches", "values": ["trainer"]}]},
    {"matchExpressions": [{"key": "app", "operator": "In"}]},
])
def test_what_the_server_would_refuse_matches_no_pod(selector: Any) -> None:
    """A recording is hostile: an operator the API server never accepts, or ``In`` without
    values, selects nothing rather than raising or selecting everything."""
    assert not terms_match(selector_terms(selector), TRAINER)


def test_shapes_that_are_not_a_selector_are_dropped_not_raised() -> None:
    assert selector_terms("app=trainer") is None and selector_terms([]) is None
    terms = selector_terms({"matchLabels": ["app"], "matchExpressions": [
        "app", {"operator": "Exists"}, {"key": "tier", "operator": "Exists", "values": "x"}]})
    assert terms == (("tier", "Exists", ()),)


def test_a_selector_is_said_in_the_string_grammar() -> None:
    terms = selector_terms({"matchLabels": {"app": "trainer"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["a", "b"]},
        {"key": "zone", "operator": "NotIn", "values": ["x"]},
        {"key": "gpu", "operator": "Exists"}, {"key": "spot", "operator": "DoesNotExist"}]})
    assert terms_text(terms) == "app=trainer,tier in (a,b),zone notin (x),gpu,!spot"
    assert terms_text(selector_terms({})) == "" and terms_text(None) == "(none)"


def test_a_budget_reads_what_its_status_says_and_nothing_else() -> None:
    """Counts the disruption controller has not written yet are unknown (None), never 0:
    a budget with no status does not "allow 0 disruptions"."""
    budget = read_budget({"metadata": {"name": "p", "namespace": "ml"},
                          "spec": {"maxUnavailable": "10%", "selector": {}},
                          "status": {"disruptionsAllowed": 2, "currentHealthy": 5,
                                     "desiredHealthy": "3"}})
    assert (budget.ref(), budget.allowed, budget.healthy, budget.needed, budget.limit) == (
        "ml/p", 2, 5, None, "maxUnavailable 10%")
    assert budget.selects("ml", {}) and not budget.selects("other", {})
    bare = read_budget({"metadata": "x", "spec": None})
    assert (bare.ref(), bare.selector, bare.allowed, bare.limit) == ("/", None, None, "")
    assert not bare.selects("", {})
