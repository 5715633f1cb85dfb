"""Driver upgrade controller (§4) — placeholder replaced below."""
from __future__ import annotations
import asyncio
from gputui.sim.operator.world import World


class Upgrader:
    def __init__(self, world: World):
        self.w = world
        self._kick = asyncio.Event()

    def kick(self) -> None:
        self._kick.set()

    async def run(self) -> None:
        await asyncio.Event().wait()
