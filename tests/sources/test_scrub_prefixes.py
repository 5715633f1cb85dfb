"""Redaction catches a credential cut short, and any URL's ``user:password@``.

Issue 27: a server answering 400 to an oversized exec-plugin token quoted the first 100
characters of ``Bearer tok-…``; redaction matched only the whole token.
"""

from __future__ import annotations

from gputui.sources.secrets import REDACTED, remember, scrub

TOKEN = "tok-" + "9f3a" * 60  # 244 characters, as an exec plugin's JWT can be


def test_a_cut_off_token_is_redacted() -> None:
    remember(TOKEN)
    quoted = f"400 Bad Request: header 'Authorization: Bearer {TOKEN[:100]}' too long"
    cleaned = scrub(quoted)
    assert TOKEN[:8] not in cleaned
    assert cleaned == f"400 Bad Request: header 'Authorization: Bearer {REDACTED}' too long"


def test_the_whole_token_and_two_cuts_in_one_line() -> None:
    remember(TOKEN)
    line = f"{TOKEN} and {TOKEN[:30]}| and {TOKEN[:9]}"
    assert scrub(line) == f"{REDACTED} and {REDACTED}| and {REDACTED}"


def test_seven_characters_are_not_a_credential() -> None:
    remember(TOKEN)
    assert scrub(f"prefix {TOKEN[:7]} stays") == f"prefix {TOKEN[:7]} stays"


def test_url_userinfo_is_redacted_even_when_unknown() -> None:
    text = "GET https://bob:hunter2@api.example:6443/api failed; see http://host/x@y"
    assert scrub(text) == (f"GET https://{REDACTED}@api.example:6443/api failed; "
                           "see http://host/x@y")


def test_url_redaction_stays_inside_the_url() -> None:
    """An audit line's JSON: the server URL, then a user with an ``@`` (it once ran across)."""
    line = '{"server":"http://127.0.0.1:6443","uid":"u-1","user":"alice@example.com"}'
    assert scrub(line) == line
