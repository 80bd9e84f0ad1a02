"""Kernel libraries described in YAML, in the style of ExecuTorch's functions.yaml.

A library is a list of entries::

    - op: gemm
      header: tvmk_portable.h          # declares the kernels (include path of the library)
      type_alias:
        T0: [float32]
      kernels:
        - arg_meta: {A: [T0], B: [T0], C: [T0], Y: [T0]}   # or null: any dtypes
          kernel_name: tvmk_gemm_f32
          sources: [gemm.c]            # relative to the YAML; compiled only when selected

A board library's kernel (``runtime/kernels/cmsis_nn``) also lists the functions of its
third-party tree it ``calls`` and the ``buffer`` request that sizes its scratch.

A kernel that may write its output over an input says which, by argument name:
``inplace: [A, B]``. It promises that it writes output element i only after it has read
every element of that input up to i, in the order of the elements, so an output whose
elements are no larger than the input's may start at the input's address (the memory
planner does so where the input dies at that operator: :mod:`tvmdev.plan.inplace`).
A kernel that reads a window of its input (depthwise convolution) keeps instead what it
still has to read of the input it writes over, in its scratch: ``inplace_keep: RULE`` (a
rule of :mod:`tvmdev.model.scratch` sizing that scratch: the ring of input rows) or
``inplace_keep: buffer`` (its ``buffer`` already holds a copy of what it reads). It
promises only that its output, no larger in bytes than the input, may start at the
input's address; it finds out at run time (output == input) and then keeps the rows.

A kernel may name its own ``header`` (the int8 kernels of an op declared apart from its
float ones: ``header: tvmk_s8.h``).

Calling convention: by default the op's inputs in ONNX order (absent optional ones as
NULL), its outputs, ``const struct <params> *params``, ``void *resource_handle``. A kernel
may list its own order with ``args: [Y, A, B, C, params, resource_handle]`` (every name
exactly once).

Scratch: a kernel of an op whose params carry scratch (gemm, matmul) may say what it
needs of the workspace for a call, ``scratch: 1024`` (bytes) or ``scratch: gemm_pack`` (a
rule of :mod:`tvmdev.model.scratch`); a kernel that says nothing gets none of its own.

An entry for an op tvmdev does not know declares a custom operator (its source operator,
arguments, params, shape rule and reference: :mod:`.custom_ops`); tvmdev generates its
header, and its kernels' ``scratch`` may be a rule over the call's shapes and params.

Libraries merge with precedence user > device kind > portable. For each operator the
resolver builds a chain of every kernel that matches the op and its tensors' dtypes, in
precedence order (within a library: specific ``arg_meta`` before ``null``); the executor
calls them in turn while they return ``TVM_DEVICE_DECLINED``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import naming
from ..errors import TvmdevError, Where, shown
from ..model.custom import CustomOp, CustomScratch
from ..model.ops import KERNEL_DTYPES, OPS, OpDef, kernel_params
from ..model.scratch import RULES
from . import kernel_keys, yamlio
from .custom_ops import CUSTOM_KEYS, check_defined, custom_scratch, is_custom, read_custom
from .fields import name_in, optional

ENTRY_KEYS = ("op", "header", "type_alias", "kernels", *CUSTOM_KEYS)
KERNEL_KEYS = ("arg_meta", "kernel_name", "sources", "args", "scratch", "header", "calls",
               "buffer", "inplace", "inplace_keep")
LEVELS = ("user", "device", "board", "portable")


@dataclass(frozen=True)
class Kernel:
    """One kernel of one library."""

    op: str
    name: str  # the C symbol
    arg_meta: tuple[tuple[str, tuple[str, ...]], ...] | None  # arg -> allowed dtypes
    header: str
    include_dir: Path  # where the header lives
    sources: tuple[Path, ...]
    library: str  # a name for listings: "portable", "woofles", or the YAML's path
    level: str  # "user", "device" or "portable"
    where: Where
    args: tuple[str, ...] = ()  # the calling order; empty: the default order
    # bytes, or a rule of tvmdev.model.scratch, or a custom op's rule
    scratch: str | int | CustomScratch | None = None
    # A board library's kernel (cmsis_nn): the functions of its third-party tree it calls
    # (the build compiles what they reach) and the request that sizes its scratch.
    calls: tuple[str, ...] = ()
    buffer: str | None = None
    # The inputs (by index) the kernel may write its output over: it reads each element
    # before it writes the output's element at that place (``inplace: [A, B]``).
    inplace: tuple[int, ...] = ()
    # How it keeps what it still reads of an input it writes over: a scratch rule of
    # tvmdev.model.scratch (the bytes it needs then), or "buffer" (its buffer holds it).
    inplace_keep: str | None = None

    def matches(self, dtypes: dict[str, str]) -> bool:
        """Whether the kernel accepts these argument dtypes."""
        if self.arg_meta is None:
            return True
        meta = dict(self.arg_meta)
        return all(arg in meta and dtype in meta[arg] for arg, dtype in dtypes.items())


@dataclass(frozen=True)
class Library:
    name: str
    level: str
    kind: str | None  # the device kind a device library serves
    path: Path
    kernels: tuple[Kernel, ...]
    custom: tuple[CustomOp, ...] = ()  # the custom operators its entries declare


def load_library(path: Path, level: str, name: str | None = None,
                 kind: str | None = None, include_dir: Path | None = None,
                 text: str | None = None) -> Library:
    """Load and check one kernel library YAML (``text``: its content, for a library about
    to be written at ``path``). Headers are found in ``include_dir`` (default: the YAML's
    folder)."""
    doc = yamlio.load(path) if text is None else yamlio.loads(text, str(path))
    file = str(path)
    if doc is None:
        doc = yamlio.LineList()
    if not isinstance(doc, list):
        raise TvmdevError("a kernel library must be a list of '- op:' entries", Where(file, 1))
    reader = _LibraryReader(path, level, name or file, (include_dir or path.parent).resolve(),
                            generated=text is not None)
    seen_ops: dict[str, int] = {}
    for i, entry in enumerate(doc):
        op = reader.entry_op(entry, yamlio.where_of(doc, i), seen_ops)
        reader.entry(op, entry, yamlio.where_of(doc, i))
    return Library(name or file, level, kind, path, tuple(reader.kernels),
                   tuple(reader.custom))


# Shipped libraries loaded, by (path, digest of the YAML's bytes): a command reads the
# portable library up to a dozen times, and each read parses and checks ~900 lines.
_SHIPPED: dict[tuple[Path, str, str, str], Library] = {}


def load_shipped_library(path: Path, level: str, name: str) -> Library:
    """``load_library`` of a library shipped with tvmdev (runtime/kernels/...), whose
    files tvmdev never writes: loaded once for each content of its YAML."""
    key = (path.resolve(), hashlib.sha256(path.read_bytes()).hexdigest(), level, name)
    lib = _SHIPPED.get(key)
    if lib is None:
        lib = _SHIPPED[key] = load_library(path, level, name)
    return lib

class _LibraryReader:
    """Reads the entries of one library, each op's kernels in turn."""

    def __init__(self, path: Path, level: str, name: str, include: Path,
                 generated: bool) -> None:
        self.path, self.level, self.name, self.include = path, level, name, include
        self.generated = generated  # sources are written with the library, not there yet
        self.kernels: list[Kernel] = []
        self.custom: list[CustomOp] = []

    def entry_op(self, entry: Any, w: Where, seen_ops: dict[str, int]) -> str:
        """The op of one entry, checked: a mapping of known keys, one entry per op; an
        op tvmdev does not know only with a custom op's declaration."""
        if not isinstance(entry, dict):
            raise TvmdevError("each entry must be a mapping with 'op' and 'kernels'", w)
        _known_keys(entry, ENTRY_KEYS, "entry")
        op = entry.get("op")
        custom = is_custom(entry)
        if custom and isinstance(op, str) and op in OPS and not self.ours(op, w):
            given = ", ".join(k for k in CUSTOM_KEYS if k in entry)
            raise TvmdevError(f"op {op} is already known to tvmdev", yamlio.where_of(
                entry, "op"), hint=f"list kernels for {op} without {given}, or give the "
                                   "custom op a name of its own")
        if not custom and not name_in(op, OPS):
            raise TvmdevError(f"unknown op {shown(op)}", yamlio.where_of(entry, "op"),
                              hint="known ops: " + ", ".join(OPS))
        if not isinstance(op, str):
            raise TvmdevError(f"op must be a name, not {shown(op)}", yamlio.where_of(
                entry, "op"))
        if str(op) in seen_ops:
            raise TvmdevError(f"op '{op}' has two entries (the first at line "
                              f"{seen_ops[str(op)]})",
                              yamlio.where_of(entry, "op"),
                              hint="list all of an op's kernels under one entry")
        seen_ops[str(op)] = yamlio.where_of(entry, "op").line
        return str(op)

    def ours(self, op: str, w: Where) -> bool:
        """Whether ``op`` is in the op table as this very entry's custom op (the file is
        read again by the pipeline while its ops are registered)."""
        from ..model.custom import CUSTOM

        return op in CUSTOM and CUSTOM[op].where == w

    def entry(self, op: str, entry: dict[str, Any], w: Where) -> None:
        custom = read_custom(op, entry, self.path, w) if is_custom(entry) else None
        if custom is not None:
            self.custom.append(custom)
            entry = {**entry, "header": custom.header}
        header = entry.get("header")
        if not isinstance(header, str) or not header:
            raise TvmdevError(f"entry '{op}' needs a 'header' that declares its kernels", w)
        aliases = _type_aliases(entry)
        items = entry.get("kernels")
        if not isinstance(items, list) or not items:
            raise TvmdevError(f"entry '{op}' needs a non-empty 'kernels' list", w)
        opdef = custom.opdef() if custom is not None else OPS[op]
        for j, item in enumerate(items):
            self.kernel(opdef, header, aliases, item, yamlio.where_of(items, j), custom)

    def kernel(self, opdef: OpDef, header: str, aliases: dict[str, tuple[str, ...]],
               item: Any, kw: Where, custom: CustomOp | None = None) -> None:
        op = opdef.name
        if not isinstance(item, dict):
            raise TvmdevError("each kernel must be a mapping with arg_meta and kernel_name", kw)
        _known_keys(item, KERNEL_KEYS, "kernel")
        if "arg_meta" not in item or "kernel_name" not in item:
            raise TvmdevError("a kernel needs arg_meta (null for any) and kernel_name", kw)
        kname = item["kernel_name"]
        nwhere = yamlio.where_of(item, "kernel_name")
        if not isinstance(kname, str):
            raise TvmdevError(f"kernel_name {shown(kname)} is not a C identifier", nwhere)
        naming.check_identifier(kname, "kernel_name", nwhere)
        meta = None if item["arg_meta"] is None else _arg_meta(opdef, item, aliases)
        own = item.get("header", header) if custom is None else header
        if not isinstance(own, str) or not own:
            raise TvmdevError(f"header of {kname} must be a file name, not {shown(own)}",
                              yamlio.where_of(item, "header"))
        sources = self.sources(item, kname)
        scratch: str | int | CustomScratch | None = None
        if custom is None:
            scratch = _scratch(item, opdef)
        else:
            check_defined(kname, sources, nwhere)
            scratch = custom_scratch(custom, item) if "scratch" in item else None
        self.kernels.append(Kernel(op, kname, meta, own, self.include, sources, self.name,
                                   self.level, kw, _arg_order(opdef, item, kname), scratch,
                                   kernel_keys.names(item, "calls"), kernel_keys.buffer(item),
                                   kernel_keys.inplace(item, opdef, kname),
                                   kernel_keys.inplace_keep(item, opdef, kname)))

    def sources(self, item: dict[str, Any], kname: str) -> tuple[Path, ...]:
        sources = optional(item, "sources", [])
        if not isinstance(sources, list):
            raise TvmdevError("sources must be a list of C files",
                              yamlio.where_of(item, "sources"))
        paths = []
        for s in sources:
            if not isinstance(s, str) or not s:
                raise TvmdevError(f"sources of {kname}: {shown(s)} is not a file name",
                                  yamlio.where_of(item, "sources"))
            p = (self.path.parent / s).resolve()
            if not self.generated and not p.is_file():
                raise TvmdevError(f"source {shown(s)} of {kname} does not exist",
                                  yamlio.where_of(item, "sources"),
                                  hint=f"paths are relative to {self.path.parent}")
            paths.append(p)
        return tuple(paths)


def _known_keys(node: dict[str, Any], allowed: tuple[str, ...], what: str) -> None:
    for key in node:
        if key not in allowed:
            raise TvmdevError(f"unknown key {shown(key)}", yamlio.where_of(node, key),
                              hint=f"{what} keys: " + ", ".join(allowed))


def _type_aliases(entry: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    aliases: dict[str, tuple[str, ...]] = {}
    node = optional(entry, "type_alias", {})
    if not isinstance(node, dict):
        raise TvmdevError(f"type_alias must be a mapping, not {shown(node)}",
                          yamlio.where_of(entry, "type_alias"))
    for alias, types in node.items():
        where = yamlio.where_of(entry["type_alias"], alias)
        if not isinstance(types, list) or not types:
            raise TvmdevError(f"type_alias {alias} must be a list of dtypes", where)
        for t in types:
            if not name_in(t, KERNEL_DTYPES):
                raise TvmdevError(f"unknown dtype {shown(t)} in type_alias {alias}", where,
                                  hint="dtypes: " + ", ".join(KERNEL_DTYPES))
        aliases[str(alias)] = tuple(types)
    return aliases


def _arg_meta(opdef: OpDef, item: dict[str, Any], aliases: dict[str, tuple[str, ...]]
              ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``arg_meta``: each argument with the dtypes it accepts (aliases expanded)."""
    op = opdef.name
    mnode = item["arg_meta"]
    if not isinstance(mnode, dict):
        raise TvmdevError("arg_meta must be a mapping or null", yamlio.where_of(item, "arg_meta"))
    args = set(opdef.inputs) | set(opdef.outputs)
    pairs = []
    for arg, alias_list in mnode.items():
        awhere = yamlio.where_of(mnode, arg)
        if arg not in args:
            raise TvmdevError(f"{shown(arg)} is not an argument of {op}", awhere,
                              hint="arguments: " + ", ".join(sorted(args)))
        if not isinstance(alias_list, list):
            raise TvmdevError(f"arg_meta of {arg} must be a list of aliases", awhere)
        allowed: list[str] = []
        for a in alias_list:
            if name_in(a, aliases):
                allowed.extend(aliases[a])
            elif name_in(a, KERNEL_DTYPES):
                allowed.append(a)
            else:
                raise TvmdevError(f"type alias {shown(a)} is used but not defined", awhere,
                                  hint="define it under type_alias")
        pairs.append((str(arg), tuple(allowed)))
    # a kernel that leaves a required argument untyped matches no call of the op: most
    # likely an entry under the wrong op (one whose argument names it shares)
    required = [a for a in (*opdef.inputs, *opdef.outputs) if a not in opdef.optional]
    missing = [a for a in required if a not in mnode]
    if missing and not opdef.variadic:
        raise TvmdevError(f"arg_meta of {shown(item.get('kernel_name'))} leaves "
                          f"{', '.join(missing)} of {op} untyped: no call of {op} matches it",
                          yamlio.where_of(item, "arg_meta"),
                          hint=f"type every argument of {op}: {', '.join(required)} (or "
                               "arg_meta: null for any dtypes), or move it under its op")
    return tuple(pairs)


def _arg_order(opdef: OpDef, item: dict[str, Any], kname: str) -> tuple[str, ...]:
    """A kernel's own argument order (``args``), or empty for the default order."""
    if "args" not in item:
        return ()
    want = [n for _, n in kernel_params(opdef)]
    given = item["args"]
    if not isinstance(given, list) or sorted(map(shown, given)) != sorted(map(shown, want)):
        raise TvmdevError(f"args of {kname} must name each of {', '.join(want)} once",
                          yamlio.where_of(item, "args"))
    return tuple(map(str, given))


def _scratch(item: dict[str, object], opdef: OpDef) -> str | int | None:
    """A kernel's ``scratch``: bytes, or a rule for ``op``'s params."""
    if "scratch" not in item:
        return None
    op = opdef.name
    value = item["scratch"]
    where = yamlio.where_of(item, "scratch")
    if not opdef.scratch:
        with_scratch = ", ".join(o.name for o in OPS.values() if o.scratch)
        raise TvmdevError(f"{op} kernels get no scratch: struct {opdef.params_struct} has "
                          "no scratch fields", where,
                          hint=f"ops whose kernels may have scratch: {with_scratch}")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**31 - 1:
        return value  # params.scratch_bytes is an int32_t
    rules = [r.name for r in RULES.values() if op in r.ops]
    if isinstance(value, str) and value in rules:
        return value
    raise TvmdevError(f"scratch must be a number of bytes or a rule for {op}, got {shown(value)}",
                      where, hint="rules for " + op + ": " + (", ".join(rules) or "none"))
