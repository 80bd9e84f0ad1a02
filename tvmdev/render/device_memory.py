"""What a device kind with memory of its own adds to its generated code
(docs/device-memory.md): the names of its memory API, and its kernels' prototypes, whose
tensor arguments are addresses in its memory, with the scratch address last.
"""

from __future__ import annotations

from typing import Any

from ..model import status
from ..model.device import DeviceSpec
from ..model.ops import OPS, OpDef, kernel_params, memory_params, wrapped_prototype
from ..write.files import OutFile
from .engine import banner, render


def layouts_scaffold(spec: DeviceSpec, dev: dict[str, Any], ops: list[str]) -> OutFile:
    """``kernels/<kind>_layouts.yaml``, the user's: the layouts the kind wants its
    constants in (tvmdev/load/device_layouts.py), none at first, with the inputs of its
    operators named."""
    path = f"kernels/{spec.name}_layouts.yaml"
    return OutFile(path, render("device_layouts.yaml.j2",
                                banner=banner("hash", spec.command, "scaffold"),
                                api_version=status.API_VERSION, dev=dev,
                                ops=[{"op": o, "inputs": ", ".join(OPS[o].inputs)}
                                     for o in dict.fromkeys(ops)]), "scaffold")


def memory_context(spec: DeviceSpec) -> dict[str, Any] | None:
    """The names of a kind's memory API, or None when it has no memory."""
    if spec.memory is None:
        return None
    upper, camel = spec.upper, spec.camel
    return {
        "size": spec.memory.size, "alignment": spec.memory.alignment,
        "addr_t": f"tvm_device_{spec.name}_addr_t",
        "size_macro": f"TVM_DEVICE_{upper}_MEMORY_SIZE",
        "align_macro": f"TVM_DEVICE_{upper}_MEMORY_ALIGN",
        "none_macro": f"TVM_DEVICE_{upper}_ADDR_NONE",
        "copy_to": f"TVMDevice{camel}CopyTo", "copy_from": f"TVMDevice{camel}CopyFrom",
        "wait": f"TVMDevice{camel}Wait",
    }


def memory_prototype(op: OpDef, name: str, kind: str, dtypes: dict[str, str], struct: str
                     ) -> str:
    """The kernel's prototype, wrapped at 100 columns as the CPU kernels' are."""
    return wrapped_prototype(name, memory_params(op, kind, dtypes, struct))


def sim_tensors(op: OpDef, dtypes: dict[str, str], struct: str) -> list[dict[str, Any]]:
    """The tensor arguments as tvmdev's simulated kernel translates them: the pointer type
    the portable kernel takes, and whether it may be absent (an optional input)."""
    types = dict((n, t) for t, n in kernel_params(op, dtypes, struct))
    return [{"name": n, "ctype": types[n].rstrip(" *") + " *",
             "optional": n in op.optional}
            for n in (*op.inputs, *op.outputs)]
