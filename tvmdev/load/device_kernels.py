"""The kernels ``tvmdev new-device --ops`` scaffolds for one operator, from data.

Every op with a float form gets ``<device>_<op>_f32``, which delegates to the portable
float kernel. An op with an int8 form (:data:`tvmdev.model.s8.table.S8OPS`) gets one
more kernel per int8 kernel the portable library lists for it (an ``arg_meta`` naming
int8): the same argument dtypes, the int8 params struct of its ``S8OPS`` entry, and the
header that declares both (``tvmk_s8.h``, ``tvmk_s8_ops.h``). Adding an int8 op to the
table and its kernel to the portable library is all it takes for devices to claim it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import Where
from ..model.device import DeviceSpec
from ..model.ops import OPS, QUANT_OPS
from ..model.s8.table import S8OPS
from .library import Kernel, Library
from .platform import platform_by_name

FLOAT_HEADER = "tvmk_portable.h"


@dataclass(frozen=True)
class Variant:
    """One scaffolded kernel of an op: its C name, the portable kernel it delegates to,
    its arguments' dtypes and its params struct."""

    op: str
    name: str
    portable: Kernel
    dtypes: tuple[tuple[str, str], ...]  # argument -> dtype, where not float32
    params_struct: str

    @property
    def int8(self) -> bool:
        """Whether this is an int8 form (its params carry quantization parameters)."""
        return any(d == "int8" for _, d in self.dtypes)

    @property
    def header(self) -> str:
        """The portable header declaring its params struct."""
        return self.portable.header if self.int8 else FLOAT_HEADER


def _is_int16(k: Kernel) -> bool:
    """An int16 (16x8) kernel (declared in tvmk_s16.h): not scaffolded for devices yet (no
    variant claims it). Raw int16 kernels and int8 ones with int16 state are not."""
    return k.header == "tvmk_s16.h"


def _is_int8(k: Kernel) -> bool:
    return (k.arg_meta is not None and any("int8" in d for _, d in k.arg_meta)
            and not _is_int16(k))


def _float_kernel(op: str, portable: Library) -> Kernel | None:
    """The portable float kernel a float scaffold delegates to: ``tvmk_<op>_f32``, or the
    one the op shares (global_average_pool runs tvmk_mean_f32, relu6 tvmk_clip_f32)."""
    own = [k for k in portable.kernels if k.op == op and not _is_int8(k) and not _is_int16(k)]
    named = [k for k in own if k.name == f"tvmk_{op}_f32"]
    found = named or own
    return found[0] if found else None


def variants(device: str, op: str, portable: Library) -> list[Variant]:
    """The kernels a device kind claiming ``op`` gets, float first."""
    out = []
    opdef = OPS[op]
    if op not in QUANT_OPS:
        k = _float_kernel(op, portable)
        assert k is not None, f"internal error: no portable float kernel for {op}"
        ints = tuple((a, d[0]) for a, d in k.arg_meta or () if d[0] != "float32")
        out.append(Variant(op, f"{device}_{op}_f32", k, ints, opdef.params_struct))
    entry = S8OPS.get(op)
    if entry is None:
        return out
    for k in portable.kernels:
        if k.op != op or not _is_int8(k) or k.arg_meta is None:
            continue
        tag = k.name.removeprefix("tvmk_")
        name = f"{device}_{tag}" if tag == f"{op}_s8" else f"{device}_{op}_{tag}"
        dtypes = tuple((arg, allowed[0]) for arg, allowed in k.arg_meta)
        out.append(Variant(op, name, k, dtypes, entry.params_struct))
    return out


_COMMENT = re.compile(r"/\*(.*?)\*/", re.DOTALL)


def struct_doc(header: Path, struct: str) -> tuple[str, list[str], list[str]]:
    """Where ``struct`` is defined (a C header, or a header it includes from its folder),
    the comment that documents it there (the last comment before the definition: structs
    sharing one comment get it each), and the definition's lines."""
    text = header.read_text(encoding="utf-8")
    found = re.search(r"^struct " + re.escape(struct) + r" \{.*?^\};", text,
                      re.MULTILINE | re.DOTALL)
    if found is None:
        for name in re.findall(r'^#include "([^"/]+)"', text, re.MULTILINE):
            if (header.parent / name).is_file():
                try:
                    return struct_doc(header.parent / name, struct)
                except ValueError:
                    continue
        raise ValueError(f"internal error: {header.name} does not define struct {struct}")
    comments = list(_COMMENT.finditer(text, 0, found.start()))
    lines: list[str] = []
    if comments:
        for raw in comments[-1].group(1).strip().splitlines():
            line = raw.strip()
            lines.append(line[1:].strip() if line.startswith("*") else line)
    return header.name, lines, found.group(0).splitlines()


def stand_in_library(kind: str, ops: tuple[str, ...], portable: Library, root: Path
                     ) -> Library:
    """The kernel library ``tvmdev new-device KIND --ops OPS`` scaffolds (its
    ``kernels/<kind>.yaml``), for a folder at ``root``: every variant of each op, float
    first, each op's kernels in ``src/kernels/<kind>/<op>.c``."""
    path = root / f"kernels/{kind}.yaml"
    kernels = []
    for op in ops:
        opdef = OPS[op]
        for v in variants(kind, op, portable):
            dtypes = dict(v.dtypes)
            meta = tuple((a, (dtypes.get(a, "float32"),)) for a in (*opdef.inputs,
                                                                     *opdef.outputs))
            kernels.append(Kernel(op, v.name, meta, f"tvm/kernels/{kind}.h",
                                  (root / "include").resolve(),
                                  ((root / f"src/kernels/{kind}/{op}.c").resolve(),),
                                  kind, "device", Where(str(path)),
                                  # it calls the portable kernel on the same pointers
                                  # (and params: a depthwise ring in its scratch too)
                                  inplace=v.portable.inplace,
                                  inplace_keep=v.portable.inplace_keep))
    return Library(kind, "device", kind, path, tuple(kernels))


def delegated_sources(spec: DeviceSpec, portable: Library) -> list[Path]:
    """The C sources of the portable kernels that the scaffolded kernels of ``spec``
    call: each op's file calls every form's (float and int8), whichever the model uses.
    A built-in kind (its platform implements it) scaffolds none."""
    if any(platform_by_name(p).builtin_kind for p in spec.platforms):
        return []
    return sorted({s for op in spec.ops for v in variants(spec.name, op, portable)
                   for s in v.portable.sources})
