"""The debug log (``--log-file PATH`` or the ``log_file`` setting): what gputui asked, got and did.

Requests and their status, retries and their waits, the rate limiter's pauses, fallbacks
(Prometheus to exporters), failed snapshot builds and callbacks go to one file, mode 0600,
opened as the audit log is (:mod:`gputui.privatefile`): a symlink at the path is refused,
never followed; it must be a regular file owned by the user; 0600 before the first byte.
Nothing else is configured: without a log file gputui's loggers stay silent (a message on
stderr would draw over the TUI).

Secrets never reach the file, whatever a library logs: every record is formatted first and
then scrubbed of ``Authorization`` headers, bearer and basic credentials, ``token`` and
``client-key-data`` fields, PEM private keys, and every credential value gputui loaded
(:mod:`gputui.sources.secrets`), whatever shape it is printed in (:func:`redact`).
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import TextIO

from gputui.domain.sanitize import clean_text
from gputui.privatefile import open_private
from gputui.sources.secrets import scrub

REDACTED = "[REDACTED]"

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # an Authorization header, in any quoting a library might print it
    (re.compile(r"(?i)(['\"]?(?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?)[^'\",}\n]+"),
     rf"\g<1>{REDACTED}"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+"), rf"\g<1> {REDACTED}"),
    # kubeconfig and exec-credential fields that hold secrets
    (re.compile(r"(?i)(['\"]?(?:token|id-token|refresh-token|access-token|password|"
                r"client-key-data|client-key|client-certificate-data)['\"]?\s*[:=]\s*['\"]?)"
                r"[^'\",}\s]+"), rf"\g<1>{REDACTED}"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
                re.DOTALL), REDACTED),
)


def redact(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED]``."""
    text = scrub(text)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then scrubs the whole line (message, arguments and traceback) of
    credentials and of control characters (a last line of defence behind the sources'
    cleaning: ``tail -f`` of the log must not drive the terminal either)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(clean_text(super().format(record)))


#: loggers written at debug level; urllib3 says which connections open and close
DEBUG_LOGGERS = ("gputui", "urllib3")


class PrivateFileHandler(logging.StreamHandler[TextIO]):
    """A handler on a file opened by :func:`~gputui.privatefile.open_private` (logging's
    FileHandler opens by path, following symlinks); closing it closes the file."""

    def __init__(self, path: str | Path):
        fd = open_private(path, "the log file")
        super().__init__(os.fdopen(fd, "a", encoding="utf-8"))

    def close(self) -> None:
        self.acquire()
        try:
            self.flush()
            self.stream.close()
        finally:
            self.release()
            super().close()


def configure_logging(path: str | Path | None) -> logging.Handler | None:
    """Send gputui's (and urllib3's) debug records to ``path``; no path: nothing, quietly.

    Returns the handler (tests remove it again). Raises
    :class:`~gputui.privatefile.PrivateFileError` (one sentence) when the file cannot be
    opened safely; the CLI turns that into one line and exit 2.
    """
    if not path:
        logging.getLogger("gputui").addHandler(logging.NullHandler())
        return None
    handler = PrivateFileHandler(path)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(RedactingFormatter(
        "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"))
    for name in DEBUG_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        logger.propagate = False  # the root logger's stderr handler would draw over the TUI
    return handler


def remove_logging(handler: logging.Handler | None) -> None:
    """Undo :func:`configure_logging` (tests run many in one process)."""
    if handler is None:
        return
    for name in DEBUG_LOGGERS:
        logger = logging.getLogger(name)
        logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
    handler.close()
