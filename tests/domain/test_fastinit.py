"""The generated fast constructors build exactly what the dataclass's own ``__init__`` builds."""

from __future__ import annotations

from dataclasses import MISSING, InitVar, dataclass, field, fields
from typing import Any

import pytest

from gputui.domain.fastinit import maker
from gputui.domain.model import DeployLabel, NodeView, PipelineStage, SubStage
from gputui.domain.pods import ContainerInfo, PodInfo

BUILT_FAST = (NodeView, DeployLabel, SubStage, PipelineStage, ContainerInfo, PodInfo)


def _sample_arguments(cls: type[Any]) -> dict[str, Any]:
    """A value per required field (defaults are left to the constructors)."""
    return {spec.name: f"value-of-{spec.name}" for spec in fields(cls)
            if spec.default is MISSING and spec.default_factory is MISSING}


@pytest.mark.parametrize("cls", BUILT_FAST, ids=lambda cls: cls.__name__)
def test_generated_constructor_equals_the_dataclass_init(cls: type[Any]) -> None:
    arguments = _sample_arguments(cls)
    fast = maker(cls)(**arguments)
    slow = cls(**arguments)
    assert type(fast) is cls
    assert fast == slow
    assert [getattr(fast, f.name) for f in fields(cls)] == [getattr(slow, f.name)
                                                          for f in fields(cls)]


def test_positional_arguments_follow_field_order() -> None:
    made = maker(SubStage)("toolkit-validation", "ready", "detail", 3)
    assert made == SubStage("toolkit-validation", "ready", "detail", 3)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _NotInInit:
    a: int
    b: int = field(default=0, init=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class _KeywordOnly:
    a: int


@dataclass(frozen=True, slots=True)
class _WithInitVar:
    a: int
    scale: InitVar[int] = 1


@dataclass(frozen=True, slots=True)
class _WithPostInit:
    a: int

    def __post_init__(self) -> None:
        pass


@pytest.mark.parametrize("cls", [_NotInInit, _KeywordOnly, _WithInitVar, _WithPostInit],
                         ids=lambda cls: cls.__name__)
def test_classes_whose_init_does_more_are_refused(cls: type[Any]) -> None:
    with pytest.raises(TypeError):
        maker(cls)
