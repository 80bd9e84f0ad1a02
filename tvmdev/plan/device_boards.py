"""Scratch for the operators a device runs on another board's kernels: a co-processor
(``--coprocessor npu0=mps3_an547``, runtime/coproc) runs its jobs on its own CPU's kernel
libraries, whose buffers depend on that CPU (CMSIS-NN's MVE code on the M55 asks for
more than its DSP code on the M4). The main board's plan sizes each operator's scratch
for the main board's kernels; for an operator placed on such a device it takes the larger
of that and what the device's board asks, so the job's scratch, in the device's pool,
holds what the co-processor's kernel needs, and nothing is kept outside a planned pool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..load.board import board_by_name
from ..load.kernel_tree import activate
from ..load.library import Kernel
from ..model.graph import Model
from ..model.scratch import scratch_need
from .kernels import tensor_dtypes
from .placement import board_kernel, buffer_bytes, library_hooks


class BoardOptions(Protocol):
    """What of the pipeline's options this reads."""

    @property
    def device_boards(self) -> Sequence[tuple[str, str]]:
        """(device instance, the board its operators run on)."""

    @property
    def trees(self) -> Sequence[tuple[str, str]]:
        """A board library's tree, or "off", by library name."""


def with_device_boards(scratch: Mapping[int, int], model: Model,
                       chains: Mapping[int, tuple[Kernel, ...]],
                       params: Mapping[int, tuple[str, dict[str, Any]]],
                       options: BoardOptions) -> dict[int, int]:
    """``scratch`` (op -> bytes, the main board's) with each operator of a device that
    runs on another board given the larger of that and what the device's board asks."""
    if not options.device_boards:
        return dict(scratch)
    dtypes = {op.index: tensor_dtypes(model, op) for op in model.operators}
    elsewhere = device_board_scratch(model, dict(options.device_boards), chains, dtypes,
                                     params, dict(options.trees))
    return {i: max(scratch.get(i, 0), elsewhere.get(i, 0))
            for i in sorted({*scratch, *elsewhere})}


def device_board_scratch(model: Model, device_boards: Mapping[str, str],
                         chains: Mapping[int, tuple[Kernel, ...]],
                         dtypes: Mapping[int, dict[str, str]],
                         params: Mapping[int, tuple[str, dict[str, Any]]],
                         trees: Mapping[str, str] | None = None) -> dict[int, int]:
    """op -> the scratch bytes its device's board asks (``device_boards``: device instance
    -> board), over the board's libraries (their buffer-size probes) and the portable
    kernels (the board's tuning), for every operator placed on such a device."""
    out: dict[int, int] = {}
    for device, board_name in sorted(device_boards.items()):
        board = board_by_name(board_name)
        ops = [op for op in model.operators if op.device == device]
        for op in ops:
            values = params[op.index][1]
            need = [scratch_need(k.scratch, values, board.tuning) for k in chains[op.index]
                    if k.level == "portable"]
            out[op.index] = max(need, default=0)
        libraries, _ = activate(board.libraries, board.cpu, dict(trees or {}) or None,
                                board.platform == "zephyr")
        for active in libraries:
            hooks = library_hooks(active)
            if hooks is None:
                continue
            asked = [(op.index, kernel.buffer) for op in ops
                     if (kernel := board_kernel(active, op, dtypes[op.index])) is not None
                     and kernel.buffer and hooks.decline(
                         model, op, params[op.index][1], active.arch) is None]
            sizes = buffer_bytes(active, hooks, [(b, params[i][1]) for i, b in asked])
            for (i, _), n in zip(asked, sizes, strict=True):
                out[i] = max(out[i], n)
    return {i: n for i, n in out.items() if n}
