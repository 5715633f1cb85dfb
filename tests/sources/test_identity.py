"""The SelfSubjectReview answer is hostile input: any shape gives an identity or None."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gputui.sources.identity import MAX_NAME, ServerIdentity, parse_self_subject_review

PROPERTY = settings(max_examples=200, deadline=None, derandomize=True, database=None)

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


def review(user_info: Any) -> dict[str, Any]:
    return {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {}, "status": {"userInfo": user_info}}


def test_a_real_answer() -> None:
    answer = review({"username": "alice@example.com", "uid": "u-1",
                     "groups": ["gpu-oncall", "system:authenticated"],
                     "extra": {"scopes": ["a"]}})
    assert parse_self_subject_review(answer) == ServerIdentity(
        "alice@example.com", "u-1", ("gpu-oncall", "system:authenticated"))


def test_no_usable_username_gives_none() -> None:
    for info in ({}, {"username": ""}, {"username": 7}, {"username": "a\x1b]2;x\x07"},
                 {"username": "x" * (MAX_NAME + 1)}, None, [], "alice"):
        assert parse_self_subject_review(review(info)) is None
    assert parse_self_subject_review({"status": None}) is None
    assert parse_self_subject_review([]) is None


def test_odd_groups_and_uid_are_dropped_not_fatal() -> None:
    answer = review({"username": "bob", "uid": ["x"], "groups": ["ok", 3, None, "\x9bbad"]})
    assert parse_self_subject_review(answer) == ServerIdentity("bob", "", ("ok",))
    assert parse_self_subject_review(review({"username": "bob", "groups": "ok"})) == \
        ServerIdentity("bob")


@PROPERTY
@given(JSON)
def test_any_document_gives_an_identity_or_none(document: Any) -> None:
    parsed = parse_self_subject_review(document)
    assert parsed is None or isinstance(parsed, ServerIdentity)


@PROPERTY
@given(JSON, st.text(max_size=40), st.lists(JSON, max_size=5))
def test_any_user_info_gives_a_printable_identity_or_none(uid: Any, name: str,
                                                          groups: list[Any]) -> None:
    parsed = parse_self_subject_review(review({"username": name, "uid": uid,
                                               "groups": groups}))
    if parsed is None:
        return
    for text in (parsed.username, parsed.uid, *parsed.groups):
        assert isinstance(text, str) and text.isprintable()
    assert parsed.username == name
