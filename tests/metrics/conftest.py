"""Metrics tests reuse the emulated-cluster fixtures of tests/sim."""

from __future__ import annotations

from tests.sim.conftest import start_sim

__all__ = ["start_sim"]
