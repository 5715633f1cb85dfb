"""Pages fetched ahead: in order, errors in their place, nothing fetched once the reader
stops, and a token the peek misread followed as the page says."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gputui.sources.prefetch import PageFetcher


def _pages(count: int) -> dict[str, bytes]:
    """token -> page bytes, each naming the next token first (as the API server does)."""
    return {("" if i == 0 else f"t{i}"): json.dumps({
        "metadata": {"continue": f"t{i + 1}" if i + 1 < count else ""}, "items": [i]}).encode()
        for i in range(count)}


def _peek(data: bytes) -> str:
    return str(json.loads(data)["metadata"]["continue"])


def test_every_page_comes_once_and_in_order() -> None:
    pages, asked = _pages(7), []

    def fetch(token: str) -> bytes:
        asked.append(token)
        return pages[token]
    got = [json.loads(data)["items"][0] for data, _ in PageFetcher(fetch, _peek, ahead=2)]
    assert got == list(range(7)) and asked == list(pages)


def test_an_error_comes_after_the_pages_before_it() -> None:
    pages = _pages(5)

    def fetch(token: str) -> bytes:
        if token == "t3":
            raise OSError("connection reset")
        return pages[token]
    got: list[Any] = []
    with pytest.raises(OSError, match="connection reset"):
        for data, _ in PageFetcher(fetch, _peek):
            got.append(json.loads(data)["items"][0])
    assert got == [0, 1, 2]


def test_a_stopped_fetcher_fetches_no_more() -> None:
    pages, asked = _pages(50), []

    def fetch(token: str) -> bytes:
        asked.append(token)
        return pages[token]
    fetcher = PageFetcher(fetch, _peek, ahead=2)
    first = next(iter(fetcher))
    fetcher.stop()
    seen = len(asked)
    assert _peek(first[0]) == "t1" and seen <= 4  # the page read, two queued, one in flight
    assert len(asked) == seen


def test_list_pages_follows_the_token_a_page_names_when_the_peek_misread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gputui.sources import http

    class Page:
        def __init__(self, data: bytes):
            document = json.loads(data)
            self.items = document["items"]
            self.continue_token = document["metadata"]["true-continue"]

    pages = {"": b'{"metadata":{"continue":"wrong","true-continue":"b"},"items":[1]}',
             "b": b'{"metadata":{"true-continue":""},"items":[2]}',
             "wrong": b'{"metadata":{"true-continue":""},"items":[99]}'}
    client = object.__new__(http.KubeHttp)
    monkeypatch.setattr(client, "_fetch", lambda path, query, accept="": pages[
        (query or {}).get("continue", "")])
    client.host = "test"
    assert [p.items for p in client.list_pages("/x", Page)] == [[1], [2]]
