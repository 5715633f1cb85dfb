"""Checking, at registration, that a class fulfils a contract of :mod:`gputui.ui.contracts`.

Why not ``isinstance`` alone: a runtime Protocol only sees names, so a misspelt method makes
the check false and the view is skipped without a sound. These checks run when a class is
created or registered, so the same slip is an error at import.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import FunctionType
from typing import Protocol, TypeVar


class ContractError(TypeError):
    """A class registered for a contract lacks one of its methods or misnames a parameter."""


def _members(contract: type) -> dict[str, FunctionType]:
    """The methods a Protocol (and the Protocols it extends) asks for."""
    members: dict[str, FunctionType] = {}
    for base in reversed(contract.__mro__):
        if Protocol in base.__bases__:  # a protocol names Protocol among its bases
            members.update({name: value for name, value in vars(base).items()
                            if inspect.isfunction(value) and not name.startswith("_")})
    return members


def check_contract(cls: type, contract: type) -> None:
    """Raise :class:`ContractError` unless ``cls`` defines every method of ``contract`` with
    the same parameter names.

    Why not ``isinstance`` alone: a runtime Protocol only sees names, so a misspelt
    ``show_snapshots`` makes the check false and the view is skipped without a sound. Run at
    registration (class creation), this turns the same slip into an error at import.
    """
    for name, wanted in _members(contract).items():
        want = f"{contract.__name__}.{name}({', '.join(inspect.signature(wanted).parameters)})"
        have = inspect.getattr_static(cls, name, None)
        if not callable(have) or getattr(have, "__isabstractmethod__", False):
            raise ContractError(f"{cls.__name__} does not implement {want}")
        params = list(inspect.signature(have).parameters)
        if params != list(inspect.signature(wanted).parameters):
            raise ContractError(f"{cls.__name__}.{name}({', '.join(params)}) does not match "
                                f"{want}")


_C = TypeVar("_C", bound=type)


def fulfils(*contracts: type) -> Callable[[_C], _C]:
    """Class decorator: register ``cls`` as fulfilling ``contracts`` (checked at once)."""

    def register(cls: _C) -> _C:
        for contract in contracts:
            check_contract(cls, contract)
        return cls

    return register
