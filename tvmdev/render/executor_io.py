"""The executor's I/O API when the model's inputs and outputs are planned in the workspace
(``--io workspace``, TVM USMP's ``use_workspace_io``): the run functions take no inputs
or outputs, and ``tvmgen_<model>_map_inputs(workspace)`` / ``_map_outputs(workspace)``
return the pointers into a workspace the caller fills and reads (TVM's
``tvmgen_<model>_map_inputs`` shape), ``_static_inputs()`` / ``_static_outputs()`` those
of the static workspace."""

from __future__ import annotations

from typing import Any

from ..model.cnames import Names
from ..model.graph import Model
from ..model.ops import CTYPES
from ..plan.memory import MemoryPlan
from .engine import c_declarator


def io_signatures(prefix: str) -> dict[str, str]:
    """The declarators of the mapping functions."""
    return {
        "map_inputs": c_declarator(f"struct {prefix}_inputs {prefix}_map_inputs",
                                   ["void *workspace"]),
        "map_outputs": c_declarator(f"struct {prefix}_outputs {prefix}_map_outputs",
                                    ["void *workspace"]),
        "static_inputs": c_declarator(f"struct {prefix}_inputs {prefix}_static_inputs",
                                      ["void"]),
        "static_outputs": c_declarator(f"struct {prefix}_outputs {prefix}_static_outputs",
                                       ["void"]),
    }


def io_context(model: Model, memory: MemoryPlan, names: Names, ws_io: bool
               ) -> dict[str, Any]:
    """What the templates lay out of the I/O API: whether the I/O is in the workspace,
    the qualifier of the inputs' pointers (the caller's buffers are only read), and each
    input's and output's offset in the workspace."""

    def place(name: str) -> dict[str, Any]:
        t = model.tensors[name]
        return {"cname": t.cname, "ctype": CTYPES[t.dtype], "offset": memory.offsets[name]}

    return {
        "workspace_io": ws_io,
        "input_const": "" if ws_io else "const ",
        "mapped_inputs": [place(n) for n in model.inputs] if ws_io else [],
        "mapped_outputs": [place(n) for n in model.outputs] if ws_io else [],
    }
