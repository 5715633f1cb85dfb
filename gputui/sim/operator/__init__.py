"""The emulated NVIDIA GPU Operator stack (controllers, dcgm-exporter, timeline).

``Operator`` is imported lazily so that :mod:`gputui.sim.scenario` can use the hardware
catalogue without pulling in (and cycling through) the controllers.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Operator"]


def __getattr__(name: str) -> Any:
    if name == "Operator":
        from gputui.sim.operator.core import Operator

        return Operator
    raise AttributeError(name)
