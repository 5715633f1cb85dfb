"""Credentials in a URL's ``user:password@``: taken out at load, never shown or written.

A kubeconfig may say ``server: https://alice:PASSWORD@host`` and ``--prometheus-url`` may
carry one too: basic auth in a URL is legal. A URL is shown and written in many places
(the header, ``:summary``, the clipboard, ``check``'s output, the debug log, a recording's
header), so the userinfo is taken out where the URL enters gputui: the URL kept is the bare
one, the password is remembered by :mod:`gputui.sources.secrets` (so no text can carry it
even if it came by another way) and the credential travels as an ``Authorization: Basic``
header, as Go's ``net/http`` sends a URL's userinfo for kubectl.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from gputui.sources.secrets import remember


@dataclass(frozen=True)
class UrlCredentials:
    """A URL split into its bare form and the userinfo it carried ("" when none)."""

    url: str
    username: str = ""
    password: str = ""

    @property
    def carried(self) -> bool:
        """Whether the URL held a ``user[:password]@``."""
        return bool(self.username or self.password)

    def basic_header(self) -> str:
        """``Basic <base64(user:password)>`` of the userinfo."""
        pair = f"{self.username}:{self.password}".encode()
        return "Basic " + base64.b64encode(pair).decode("ascii")


def split_userinfo(url: str) -> UrlCredentials:
    """``url`` without its userinfo, and the userinfo percent-decoded.

    Every credential form is remembered for redaction at once (raw, decoded, the
    ``user:password`` pair and its base64), before anything can log the URL.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return UrlCredentials(url)
    if "@" not in parts.netloc:
        return UrlCredentials(url)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    raw_user, _, raw_password = userinfo.partition(":")
    user, password = unquote(raw_user), unquote(raw_password)
    found = UrlCredentials(urlunsplit(parts._replace(netloc=hostport)), user, password)
    remember(raw_password, password, userinfo, f"{user}:{password}",
             found.basic_header().removeprefix("Basic "))
    return found
