"""dcgm-exporter placeholder."""
from __future__ import annotations
from gputui.sim.operator.world import World


class Exporters:
    def __init__(self, world: World, port: int | None):
        self.w = world

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    def sync(self) -> None: ...
