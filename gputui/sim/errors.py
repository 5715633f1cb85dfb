"""Kubernetes-style API errors raised by the emulated cluster's store.

The API server turns an :class:`ApiError` into a ``Status`` object with the same code and
reason, so controllers and HTTP clients see the failures a real API server would give.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error with a Kubernetes ``Status`` code and reason (``NotFound``, ``Conflict`` ...)."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}

    def status(self) -> dict[str, Any]:
        """The ``Status`` object a real API server would answer with."""
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "details": self.details,
            "code": self.code,
        }


def not_found(resource: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{resource} "{name}" not found',
                    {"name": name, "kind": resource})


def already_exists(resource: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{resource} "{name}" already exists',
                    {"name": name, "kind": resource})


def conflict(resource: str, name: str) -> ApiError:
    return ApiError(
        409, "Conflict",
        f'Operation cannot be fulfilled on {resource} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        {"name": name, "kind": resource},
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def invalid(resource: str, name: str, message: str) -> ApiError:
    return ApiError(422, "Invalid", f'{resource} "{name}" is invalid: {message}',
                    {"name": name, "kind": resource})


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)
