"""What the training loops share: torch as an optional import, checkpoints, the learning rate.

Each model's training module (`finder`, `corners`, `tokens`) keeps its data, network and loss;
the run mechanics are here so that every model resumes, schedules and saves the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainResult:
    """What a training run wrote: the ONNX model, how long it trained, its final loss, how far
    onnxruntime's outputs lie from torch's on the same input, and its log; `cards`: the
    training examples, where the model counts them (the corner refiner)."""

    out: Path
    steps: int
    seconds: float
    parameters: int
    final_loss: float
    export_max_diff: float
    log: Path
    cards: int | None = None

    def describe(self) -> str:
        """One line for the command's output."""
        on = f" on {self.cards} cards" if self.cards is not None else ""
        return (f"wrote {self.out}: {self.parameters} parameters, {self.steps} steps in "
                f"{self.seconds / 60:.1f} min{on}, final loss {self.final_loss:.3f}, onnxruntime vs "
                f"torch max difference {self.export_max_diff:.1e}; log: {self.log}")


def require_torch(error: type[ValueError], what: str) -> Any:
    """The torch module, or `error` saying how to install the optional `train` extra."""
    try:
        import torch
    except ImportError:
        raise error(f"training {what} needs torch, the optional `train` extra: `pip install -e .[train]`") from None
    return torch


def save_checkpoint(torch: Any, path: Path, net: Any, opt: Any, step: int, seconds: float) -> None:
    """Write the network, optimiser, step and training seconds atomically."""
    tmp = path.with_suffix(".tmp")
    torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "step": step, "seconds": seconds}, tmp)
    tmp.replace(path)


def load_checkpoint(torch: Any, path: Path, net: Any, opt: Any, error: type[ValueError]) -> tuple[int, float]:
    """Restore a checkpoint written by `save_checkpoint`; returns (step, seconds) — (0, 0.0) when
    there is none. A checkpoint of another network raises `error` saying to delete it."""
    if not path.is_file():
        return 0, 0.0
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        return int(state["step"]), float(state["seconds"])
    except (OSError, KeyError, RuntimeError) as exc:
        raise error(f"{path}: cannot resume from this checkpoint ({exc}); delete it to start again") from None


def cosine_lr(base: float, step: int, steps: int, elapsed_s: float, max_minutes: float, warmup: int = 100) -> float:
    """Linear warm-up over `warmup` steps, then cosine decay to zero over the run, measured in
    steps or in wall time, whichever ends first."""
    done = max(step / steps, elapsed_s / (max_minutes * 60))
    warm = min(1.0, (step + 1) / warmup)
    return base * warm * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))
