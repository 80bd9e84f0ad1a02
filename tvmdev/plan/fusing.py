"""Which fusions the plan makes (:mod:`.fuse` rewrites, this module chooses): a pair fuses
where it does not lose.

- Both operators run on one library, and the fused operator does too (placed again to
  see): the portable kernels (the fused kernel saves a pass over memory there) or
  CMSIS-NN (its conv2d_add runs CMSIS-NN's convolution and ADD a tile at a time), never a
  slower library for the fused pass.
- On a board library, where the instructions are the two kernels' give or take a call
  per tile, the fusions must also shrink the workspace (the memory plan, made with and
  without them); otherwise they are not made.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from ..model.graph import Model, Operator
from ..model.scratch import Tuning
from .fuse import fuse_depthwise_pointwise, fuse_residual_adds
from .inplace import inplace_inputs
from .kernels import Registry, operator_scratch, resolve, tensor_dtypes
from .memory import plan_memory
from .placement import Placed, place
from .prepare import operator_params

Params = dict[int, tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Fusing:
    """What the choice reads of the options and the board."""

    on: bool  # --no-fuse: off
    tuning: Tuning  # the board's, which sizes the kernels' scratch
    inplace: bool  # --no-inplace: off
    io: bool  # the model's inputs and outputs in the workspace


def placed_model(model: Model, registry: Registry, known: frozenset[str]
                 ) -> tuple[Params, Placed]:
    """Every operator's params, and the library serving it (``known``: the device kinds
    whose kernels are known)."""
    params = operator_params(model)
    return params, place(model, registry.board, resolve(model, registry),
                         {op.index: tensor_dtypes(model, op) for op in model.operators},
                         {i: p for i, (_, p) in params.items()}, known)


def _arena(model: Model, params: Params, placed: Placed, how: Fusing) -> int:
    scratch = operator_scratch(model, placed.chains, how.tuning, placed.scratch, params)
    return plan_memory(model, how.inplace and inplace_inputs(model, placed.chains),
                       scratch=scratch, io=how.io).arena_size


def _library(model: Model, placed: Placed, name: str) -> str:
    return next(placed.placements[op.index].library for op in model.operators
                if op.name == name)


def _loses(placed: Placed, refused: frozenset[str], first: Operator, second: Operator
           ) -> str | None:
    """Why fusing ``first`` and ``second`` would lose: they run on different libraries,
    or the fused operator would not do as well (``refused``) (None: neither)."""
    libs = {placed.placements[op.index].library for op in (first, second)}
    if len(libs) != 1:
        return f"{first.name} and {second.name} run on {' and '.join(sorted(libs))}"
    if first.name in refused:
        return f"fused, {first.name} would run elsewhere than on {libs.pop()}, or need more RAM"
    return None


def plan_fusions(model: Model, registry: Registry, known: frozenset[str], how: Fusing
                 ) -> tuple[Model, dict[str, str], Params, Placed]:
    """``model`` with the fusions that do not lose made, the fusions (the first
    operator's name -> the second's), and every operator's params and library."""
    params, placed = placed_model(model, registry, known)
    fusions: dict[str, str] = {}
    for rewrite in (fuse_residual_adds, fuse_depthwise_pointwise) if how.on else ():
        refused: frozenset[str] = frozenset()
        while True:
            new, made = rewrite(model, partial(_loses, placed, refused))
            if not made:
                break
            new_params, new_placed = placed_model(new, registry, known)
            libs = {n: _library(new, new_placed, n) for n in made}
            worse = frozenset(n for n in made if libs[n] != _library(model, placed, n))
            board = frozenset(n for n in made if libs[n] != "portable")
            if not worse and board and (_arena(new, new_params, new_placed, how)
                                        >= _arena(model, params, placed, how)):
                worse = board
            if not worse:
                model, params, placed = new, new_params, new_placed
                fusions.update(made)
                break
            refused |= worse
    return model, fusions, params, placed
