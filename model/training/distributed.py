"""The process group a training run belongs to: one process, or the ranks torchrun started.

    torchrun --standalone --nproc_per_node 2 -m model.train --preset tiny

torchrun sets RANK, WORLD_SIZE and LOCAL_RANK; without them a run is its own world of one and
never touches torch.distributed.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    """Where this process stands among the training processes."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def leader(self) -> bool:
        """Rank 0 validates, logs, shows progress and writes the checkpoint."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    def sum(self, *values: float) -> list[float]:
        """The values summed over every rank (as given, in one world of one)."""
        if not self.distributed:
            return list(values)
        tensor = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor.tolist()

    def barrier(self) -> None:
        """Wait until every rank gets here (the leader writes a file the others then read)."""
        if self.distributed:
            dist.barrier()


def launcher(processes: int) -> list[str]:
    """The start of a command that runs a Python module in `processes` ranks (torchrun), or alone."""
    if processes <= 1:
        return [sys.executable]
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]


def join(device: torch.device) -> tuple[World, torch.device]:
    """Join torchrun's process group when started by it (gloo on the CPU, nccl on CUDA, one GPU per
    local rank); return the world and the device this rank trains on."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World(), device
    world = World(int(os.environ["RANK"]), size, int(os.environ.get("LOCAL_RANK", "0")))
    if device.type == "cuda":
        device = torch.device("cuda", world.local_rank)
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return world, device


def leave(world: World) -> None:
    """Close the process group this run joined."""
    if world.distributed and dist.is_initialized():
        dist.destroy_process_group()
