"""Kernel resolution: the registry of kernel libraries and each operator's chain.

Libraries merge with precedence user > device kind > portable. For each operator the
resolver builds a chain of every kernel that matches the op and its tensors' dtypes, in
precedence order (within a library: specific ``arg_meta`` before ``null``); the executor
calls them in turn while they return ``TVM_DEVICE_DECLINED``. Any kernel of the chain may
serve the call, so the operator's scratch is the most any of them needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from ..load.kernel_tree import ActiveLibrary
from ..load.library import Kernel, Library, load_library, load_shipped_library
from ..model.graph import Model, Operator
from ..model.ops import OPS, scratch_structs
from ..model.scratch import Tuning, scratch_need
from ..resources import runtime_dir


def portable_library() -> Library:
    """tvmdev's portable kernel library (runtime/kernels/portable)."""
    return load_shipped_library(runtime_dir() / "kernels/portable/kernels.yaml", "portable",
                                "portable")


@dataclass(frozen=True)
class Registry:
    """Libraries by precedence: user libraries, then device kinds', then the portable one."""

    user: tuple[Library, ...]
    device: tuple[Library, ...]
    portable: Library
    # The board's kernel libraries with their trees, placed after resolution
    # (tvmdev.plan.placement): before the portable kernels, after the others.
    board: tuple[ActiveLibrary, ...] = ()

    def chain(self, op: str, dtypes: dict[str, str], kind: str | None) -> tuple[Kernel, ...]:
        """Every kernel serving ``op`` with these dtypes, in the order they are tried."""
        libs = [*self.user, *[lib for lib in self.device if lib.kind == kind], self.portable]
        out: list[Kernel] = []
        names: set[str] = set()
        for lib in libs:
            matching = [k for k in lib.kernels if k.op == op and k.matches(dtypes)]
            matching.sort(key=lambda k: k.arg_meta is None)  # specific before catch-all
            for k in matching:
                if k.name not in names:
                    names.add(k.name)
                    out.append(k)
        return tuple(out)

    def all_kernels(self) -> list[Kernel]:
        """Every kernel of every library, in precedence order."""
        return [k for lib in (*self.user, *self.device, self.portable) for k in lib.kernels]


def device_dir_libraries(device_dir: Path, kinds: tuple[str, ...] | list[str]
                         ) -> list[Library]:
    """The kernel libraries (kernels/<kind>.yaml) of a new-device folder for ``kinds``."""
    libs = []
    for kind in kinds:
        path = device_dir / f"kernels/{kind}.yaml"
        if path.is_file():
            libs.append(load_library(path, "device", kind, kind, device_dir / "include"))
    return libs


def build_registry(user_files: list[Path], device_libs: list[Library],
                   board: tuple[ActiveLibrary, ...] = ()) -> Registry:
    """The registry of the user's library files, the device kinds' libraries and the
    board's libraries in use."""
    users = tuple(load_library(Path(p), "user") for p in user_files)
    return Registry(users, tuple(device_libs), portable_library(), board)


def tensor_dtypes(model: Model, op: Operator) -> dict[str, str]:
    """ONNX argument name -> dtype for one operator's tensors."""
    opdef = OPS[op.op]
    out: dict[str, str] = {}
    for arg, t in zip(opdef.arg_names(len(op.inputs)), op.inputs, strict=False):
        if t is not None:
            out[arg] = model.tensors[t].dtype
    for arg, t in zip(opdef.outputs, op.outputs, strict=True):
        out[arg] = model.tensors[t].dtype
    return out


def resolve(model: Model, registry: Registry) -> dict[int, tuple[Kernel, ...]]:
    """The kernel chain of every operator; a missing kernel lists what exists."""
    chains: dict[int, tuple[Kernel, ...]] = {}
    for op in model.operators:
        kind = model.device(op.device).kind if op.device else None
        dtypes = tensor_dtypes(model, op)
        chain = registry.chain(op.op, dtypes, kind)
        if not chain:
            exist = [f"{k.name} ({k.library}: " + (
                "any dtypes" if k.arg_meta is None else
                ", ".join(f"{a}={'|'.join(d)}" for a, d in k.arg_meta)) + ")"
                for k in registry.all_kernels() if k.op == op.op]
            raise TvmdevError(
                f"no kernel for operator '{op.name}' ({op.op} with "
                + ", ".join(f"{a}={d}" for a, d in dtypes.items()) + ")", op.where,
                hint=("kernels for " + op.op + ": " + "; ".join(exist)) if exist
                else f"no library has a kernel for {op.op}")
        chains[op.index] = chain
    return chains


def operator_scratch(model: Model, chains: dict[int, tuple[Kernel, ...]], tuning: Tuning,
                     asked: dict[int, int] | None = None,
                     params: dict[int, tuple[str, dict[str, Any]]] | None = None
                     ) -> dict[int, int]:
    """The scratch bytes of every operator that needs some: the most over its chain, or
    what a board library ``asked`` for the operator. ``params``: every operator's params
    struct and values (computed here when not given)."""
    out: dict[int, int] = {}
    with_scratch = scratch_structs()
    for op in model.operators:
        struct, values = (params[op.index] if params is not None
                          else model.operator_params(op))
        if struct not in with_scratch:
            continue
        need = max([scratch_need(k.scratch, values, tuning) for k in chains[op.index]]
                   + [(asked or {}).get(op.index, 0)])
        if need:
            out[op.index] = need
    return out
