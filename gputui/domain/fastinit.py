"""Fast constructors for the frozen, slotted dataclasses made by the thousand per build.

A frozen dataclass's generated ``__init__`` sets each field through
``object.__setattr__`` looked up at call time; for the ~150,000 container and pod records of
a 5,000-node first snapshot that costs a tenth of the build. :func:`maker` generates the same
constructor (same parameters, same defaults, same object) that sets the slots through their
descriptors bound once, about twice as fast. It is how ``dataclasses`` itself builds
``__init__`` (generated source), minus the per-call lookups; no ``__post_init__`` or
validation is skipped because these classes have none: :func:`maker` refuses a class with
``__post_init__``, an ``init=False`` field, a keyword-only field or an ``InitVar`` (the
generated constructor would differ from ``cls(...)``), and ``tests/domain/test_fastinit.py``
compares the two constructors for every class the domain builds this way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, InitVar, fields, is_dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")


def maker(cls: type[T]) -> Callable[..., T]:
    """A constructor for ``cls`` (a frozen, slotted dataclass without ``__post_init__``)
    taking the same arguments as ``cls(...)``."""
    _refuse_unsupported(cls)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "_missing": MISSING}
    params, body = [], []
    for index, spec in enumerate(fields(cast(Any, cls))):  # a dataclass: checked above
        namespace[f"_set{index}"] = getattr(cls, spec.name).__set__
        if spec.default is not MISSING:
            namespace[f"_default{index}"] = spec.default
            params.append(f"{spec.name}=_default{index}")
        elif spec.default_factory is not MISSING:
            namespace[f"_factory{index}"] = spec.default_factory
            params.append(f"{spec.name}=_missing")
            body.append(f"    if {spec.name} is _missing: {spec.name} = _factory{index}()")
        else:
            params.append(spec.name)
        body.append(f"    _set{index}(self, {spec.name})")
    source = (f"def make({', '.join(params)}):\n    self = _new(_cls)\n" + "\n".join(body)
              + "\n    return self\n")
    exec(source, namespace)  # noqa: S102 - generated from the class's own field names
    made: Callable[..., T] = namespace["make"]
    made.__doc__ = f"Make a {cls.__name__} (fast path of its generated __init__)."
    return made


def _refuse_unsupported(cls: type[Any]) -> None:
    """Raise TypeError unless ``cls(...)`` is exactly "set every field from its parameter"."""
    if not is_dataclass(cls) or not hasattr(cls, "__slots__") or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass without __post_init__")
    init_vars = [name for name, hint in getattr(cls, "__annotations__", {}).items()
                 if isinstance(hint, InitVar) or (isinstance(hint, str) and "InitVar" in hint)]
    if init_vars:
        raise TypeError(f"{cls.__name__} has InitVar fields {init_vars}")
    for spec in fields(cls):
        if not spec.init or spec.kw_only:
            raise TypeError(f"{cls.__name__}.{spec.name} is init=False or keyword-only")
