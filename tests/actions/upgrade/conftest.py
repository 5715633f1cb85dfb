"""Fixtures for the upgrade, canary and MIG action tests: the emulated cluster with its
controllers (``start_sim``, shared with the emulator's own tests)."""

from __future__ import annotations

from tests.sim.conftest import start_sim

__all__ = ["start_sim"]
