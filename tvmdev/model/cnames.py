"""Every identifier and macro the generated code defines for a model, each with its owner.

:class:`Names` spells them: the executor and the harnesses take every name they print
from here. :class:`Registry` records each spelling with the input it comes from and finds
clashes: two sources giving one spelling, or a member, variable or function spelled like
a keyword or like a macro some header defines (:func:`tvmdev.naming.reserved`). Macros,
and the names themselves (which become file names, and macros once upper-cased), are
compared case-insensitively; a member or variable is compared exactly with the macros.

What happens on a clash depends on who chose the name:

* tensors and operators (an importer writes ``serving_default_input_1:0``) are mangled:
  :func:`tvmdev.naming.c_spelling`, then ``_2``, ``_3``... until every spelling they give
  is free;
* the model, device instances and device kinds (a person chose them, and they appear in
  the code that person writes) are refused with one line naming both sources.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from .. import naming
from ..errors import TvmdevError, Where, shown
from .graph import Model
from .ops import OPS, scratch_structs

MACRO = "macro"
GLOBAL = "identifier"  # ordinary identifiers: file scope and the run function's locals
TAG = "tag"
FILE = "file"  # header paths (case-insensitively: macOS)

DEVICE_FUNCTIONS = ("Init", "Activate", "Open", "Close", "Deactivate", "Destroy")
# Those of a kind with memory of its own (new-device --memory).
MEMORY_FUNCTIONS = ("CopyTo", "CopyFrom", "Wait")
# Macros a device kind's headers define beside their guards, on some platform.
KIND_MACROS = ("API_VERSION", "OPEN_TIMEOUT_MS", "OPEN_TIMEOUT_TICKS", "MUTEX_CB_SIZE",
               "TIMEOUT_MS", "DEFINE", "MEMORY_SIZE", "MEMORY_ALIGN", "TRANSFER_TIMEOUT",
               "BUS_ADDRESS")
STATUS_SPELLINGS = (
    "TVM_DEVICE_STATUS_H_", "TVM_DEVICE_API_VERSION", "TVM_DEVICE_OK", "TVM_DEVICE_PENDING",
    "TVM_DEVICE_ERR_BUSY",
    "TVM_DEVICE_ERR_TIMEOUT", "TVM_DEVICE_ERR_NOT_READY", "TVM_DEVICE_ERR_INVALID",
    "TVM_DEVICE_ERR_IO", "TVM_DEVICE_ERR_UNSUPPORTED", "TVM_DEVICE_DECLINED")
# The harnesses' own identifiers (templates/harness/**).
HARNESS_IDENTIFIERS = (
    "workspace", "trace_dir", "read_file", "write_file", "tvmdev_host_trace", "run_job",
    "main", "put", "put_hex", "put_int", "put_floats", "put_counts", "stack_pointer",
    "stack_paint", "stack_low_water", "magnitude", "matches", "print_floats",
    "tvmdev_app_run")
HARNESS_MACROS = ("MAX_THREADS", "STACK_PAINT", "TVMDEV_APP_H_", "TVMDEV_APP_DEVICE_COUNT",
                  "TVMDEV_APP_DEVICES")


class Spelling(NamedTuple):
    space: str  # MACRO, GLOBAL, TAG, FILE, "member <struct>" or "name <class>"
    text: str


def member(struct: str, text: str) -> Spelling:
    """A member of one of the generated structs (inputs, outputs, devices)."""
    return Spelling(f"member {struct}", text)


def name_key(what: str, text: str) -> Spelling:
    """A name among the others of its class (compared case-insensitively)."""
    return Spelling(f"name {what}", text)


class Names:
    """The spellings of the generated code of the model called ``model``."""

    def __init__(self, model: str) -> None:
        self.prefix = f"tvmgen_{model}"
        self.macro = self.prefix.upper()
        self.guard = f"{self.macro}_H_"

    def size(self, cname: str) -> str:
        """``TVMGEN_M_X_SIZE``: the bytes of input or output ``x``."""
        return f"{self.macro}_{cname.upper()}_SIZE"

    def const(self, cname: str, part: str = "") -> str:
        """The array of a constant (``part``: ``_data``, ``_scales`` of a 4-bit one)."""
        return f"{self.prefix}_const_{cname}{part}"

    def params(self, cname: str) -> str:
        """The static params struct of an operator."""
        return f"{self.prefix}_params_{cname}"

    def bit(self, device: str) -> str:
        """A device's bit in the unwind masks."""
        return f"{self.macro}_DEVICE_{device.upper()}"

    @staticmethod
    def local(cname: str) -> str:
        """The run function's pointer to an intermediate tensor."""
        return f"t_{cname}"

    @staticmethod
    def scratch_local(struct: str) -> str:
        """The run function's copy of a params struct that gets scratch: gemm_params for
        struct tvmk_gemm_params."""
        return struct.removeprefix("tvmk_")

    @staticmethod
    def harness(prefix: str, name: str) -> str:
        """A harness's variable for a tensor or device: ``in_x``, ``out_y``, ``expect_y``,
        ``dev_npu0``, ``sim_npu0``."""
        return f"{prefix}_{name}"

    def fixed(self) -> list[tuple[str, list[Spelling]]]:
        """What the executor, the status header and the harnesses define whatever the
        model holds, by owner."""
        macros = [self.guard] + [f"{self.macro}_{m}" for m in (
            "WORKSPACE_SIZE", "WORKSPACE_ALIGNMENT", "ALIGNED", "COLD", "CONST_SECTION",
            "WORKSPACE_SECTION", "CONST", "WORKSPACE", "TRACE_HOOK", "TRACE",
            "NO_STATIC_WORKSPACE")]
        idents = [f"{self.prefix}_{s}" for s in ("run", "run_with_workspace", "unwind",
                                                  "workspace")]
        idents += ["inputs", "outputs", "devices", "workspace", "ws", "ret", "open_mask",
                   "active_mask", "status", *sorted(self.scratch_local(s)
                                                     for s in scratch_structs())]
        tags = [f"{self.prefix}_{s}" for s in ("inputs", "outputs", "devices")]
        return [
            (f"the executor ({self.prefix}.h/.c)",
             [Spelling(MACRO, m) for m in macros] + [Spelling(GLOBAL, i) for i in idents]
             + [Spelling(TAG, t) for t in tags]),
            ("tvm/device/status.h", [Spelling(MACRO, m) for m in STATUS_SPELLINGS]
             + [Spelling(GLOBAL, "TVMDeviceStatusName"), Spelling(FILE, "tvm/device/status.h")]),
            ("the harnesses", [Spelling(MACRO, m) for m in HARNESS_MACROS]
             + [Spelling(GLOBAL, i) for i in HARNESS_IDENTIFIERS] + [Spelling(TAG, "job")]),
        ]

    def tensor(self, cname: str, role: str, quantized: bool = False) -> list[Spelling]:
        """What a tensor of ``role`` gives: struct members, macros, arrays, locals and
        the harnesses' buffers (``in_x``, ``out_x``, ``expect_x``)."""
        out = []
        if role in ("input", "output"):
            out += [member(role + "s", cname), Spelling(MACRO, self.size(cname))]
            out += [Spelling(GLOBAL, self.harness(p, cname))
                    for p in (("in",) if role == "input" else ("out", "expect"))]
        elif role == "constant":
            out += [Spelling(GLOBAL, self.const(cname, p))
                    for p in (("", "_data", "_scales") if quantized else ("",))]
        else:
            out.append(Spelling(GLOBAL, self.local(cname)))
        return [*out, name_key("tensor", cname)]

    def operator(self, cname: str) -> list[Spelling]:
        """What an operator gives: its params struct."""
        return [Spelling(GLOBAL, self.params(cname)), name_key("operator", cname)]

    def device(self, name: str) -> list[Spelling]:
        """What a device instance gives: a member, its unwind bit, the harnesses'
        instances (``dev_npu0``, ``sim_npu0``)."""
        return [member("devices", name), Spelling(MACRO, self.bit(name)),
                Spelling(GLOBAL, self.harness("dev", name)),
                Spelling(GLOBAL, self.harness("sim", name)), name_key("device", name)]


def kind_spellings(kind: str, platforms: Iterable[str]) -> list[Spelling]:
    """What the device headers of ``kind`` define on any of ``platforms``: the type,
    the six functions, its kernels, header guards, macros and header paths."""
    up, cc = kind.upper(), naming.camel(kind)
    platforms = sorted(platforms)
    macros = [f"TVM_DEVICE_{up}_H_", f"TVM_KERNELS_{up}_H_", f"CONFIG_TVM_DEVICE_{up}",
              f"CONFIG_TVM_DEVICE_{up}_OPEN_TIMEOUT_MS", f"CONFIG_TVM_DEVICE_{up}_LOG_LEVEL",
              f"CONFIG_TVM_DEVICE_{up}_INIT_PRIORITY", f"CONFIG_TVM_DEVICE_{up}_DRIVER"]
    macros += [f"TVM_DEVICE_{up}_{p.upper()}_H_" for p in platforms]
    macros += [f"TVM_DEVICE_{up}_{p.upper()}_USER_H_" for p in platforms]
    macros += [f"TVM_DEVICE_{up}_{m}" for m in KIND_MACROS]
    idents = [f"tvm_device_{kind}_t", f"tvm_device_{kind}_addr_t",
              *(f"TVMDevice{cc}{fn}" for fn in DEVICE_FUNCTIONS + MEMORY_FUNCTIONS),
              *(f"{kind}_{op}_f32" for op in OPS),
              *(f"{kind}_{s}" for s in ("data", "config", "init", "driver")),
              f"tvmdev_{kind}"]
    files = [f"tvm/device/{kind}.h", f"tvm/kernels/{kind}.h",
             *(f"tvm/device/{kind}/{p}.h" for p in platforms),
             *(f"tvm/device/{kind}/{p}_user.h" for p in platforms)]
    return ([Spelling(MACRO, m) for m in macros] + [Spelling(GLOBAL, i) for i in idents]
            + [Spelling(TAG, t) for t in (f"tvm_device_{kind}", f"tvm_device_{kind}_user",
                                          f"tvm_device_{kind}_driver_api")]
            + [name_key("kind", kind)]
            + [Spelling(FILE, f) for f in files])


class Clash(NamedTuple):
    spelling: Spelling
    other: str  # the source that gives it too, or why it is reserved
    reserved: bool


class Registry:
    """Every spelling claimed so far, with the source that gives it."""

    def __init__(self) -> None:
        self._owner: dict[tuple[str, str], str] = {}
        self._macros: dict[str, str] = {}  # exact spelling -> owner
        self._idents: dict[str, str] = {}

    @staticmethod
    def _key(s: Spelling) -> tuple[str, str]:
        folded = s.space in (MACRO, FILE) or s.space.startswith("name ")
        return (s.space, s.text.upper() if folded else s.text)

    def clash(self, spellings: Iterable[Spelling]) -> Clash | None:
        """The first of ``spellings`` that is reserved or already given, or None."""
        for s in spellings:
            named = s.space.startswith("name ") or s.space == FILE
            # A member is the bare name: no keyword or header macro. Other identifiers
            # carry a prefix (tvmgen_m_, t_, dev_), which only a type name can complete.
            why = naming.reserved(s.text) if s.space.startswith("member ") else None
            if s.space == GLOBAL and s.text in naming.TYPEDEFS:
                why = "a type of the C or POSIX headers"
            if why is not None:
                return Clash(s, why, True)
            other = self._owner.get(self._key(s))
            if other is None and not named:
                other = (self._idents if s.space == MACRO else self._macros).get(s.text)
            if other is not None:
                return Clash(s, other, False)
        return None

    def claim(self, spellings: Iterable[Spelling], owner: str) -> None:
        """Record ``spellings`` as given by ``owner`` (checked with :meth:`clash`)."""
        for s in spellings:
            self._owner[self._key(s)] = owner
            if not s.space.startswith("name ") and s.space != FILE:
                (self._macros if s.space == MACRO else self._idents)[s.text] = owner

    def refuse(self, spellings: list[Spelling], owner: str, where: Where | str | None
               ) -> None:
        """Claim ``spellings`` for ``owner``, or raise the error naming both sources."""
        clash = self.clash(spellings)
        if clash is None:
            self.claim(spellings, owner)
            return
        if clash.reserved:
            raise TvmdevError(f"{owner} gives {clash.spelling.text} in C, which is "
                              f"{clash.other}", where, hint="rename it")
        raise TvmdevError(f"{owner} collides with {clash.other} once converted to C (both "
                          f"give {clash.spelling.text})", where, hint="rename one of them")


class Namer:
    """The C spellings of one model's names, given as the loader meets them: tensors and
    operators mangled until free, devices and kinds refused on a clash."""

    def __init__(self, model: str, platforms: Iterable[str]) -> None:
        self.names = Names(model)
        self.platforms = tuple(platforms)
        self.registry = Registry()
        for owner, spellings in self.names.fixed():
            self.registry.claim(spellings, owner)
        self._kinds: set[str] = set()

    def device(self, name: str, where: Where) -> None:
        """Claim a device instance's spellings, or refuse it."""
        self.registry.refuse(self.names.device(name), f"device {shown(name)}", where)

    def kind(self, kind: str, where: Where) -> None:
        """Claim a device kind's spellings (once per kind), or refuse it."""
        if kind not in self._kinds:
            self._kinds.add(kind)
            self.registry.refuse(kind_spellings(kind, self.platforms),
                                 f"device kind {shown(kind)}", where)

    def tensor(self, name: str, role: str, quantized: bool = False) -> str:
        """The C spelling of a tensor, mangled until everything it gives is free."""
        return self._free(name, f"{role} {shown(name)}",
                          lambda c: self.names.tensor(c, role, quantized))

    def operator(self, name: str) -> str:
        """The C spelling of an operator, mangled until its params struct is free."""
        return self._free(name, f"operator {shown(name)}", self.names.operator)

    def _free(self, name: str, owner: str, spell: Callable[[str], list[Spelling]]) -> str:
        base = naming.c_spelling(name)
        for i in range(1, 100_000):
            c = base if i == 1 else f"{base}_{i}"
            while naming.reserved(c):
                c += "_"
            spellings = spell(c)
            if self.registry.clash(spellings) is None:
                self.registry.claim(spellings, owner)
                return c
        raise AssertionError(f"no free C spelling for {owner}")


def check_model(model: Model, platforms: Iterable[str], kernels: Iterable[str]) -> None:
    """Check every spelling of a complete model (after a board's offload added a device,
    with the kernel functions the executor calls); raise the error naming both sources of
    the first clash."""
    names, where = Names(model.name), model.path
    reg = Registry()
    for owner, spellings in names.fixed():
        reg.claim(spellings, owner)
    for d in model.devices:
        reg.refuse(names.device(d.name), f"device '{d.name}'", d.where)
    for kind in model.kinds:
        reg.refuse(kind_spellings(kind, platforms), f"device kind {shown(kind)}", where)
    for t in model.tensors.values():
        reg.refuse(names.tensor(t.cname, t.role, t.name in model.quantized),
                   f"{t.role} '{t.name}'", t.where)
    for op in model.operators:
        reg.refuse(names.operator(op.cname), f"operator '{op.name}'", op.where)
    for k in dict.fromkeys(kernels):
        spelling = Spelling(GLOBAL, k)
        clash = reg.clash([spelling])
        if clash is not None and not clash.other.startswith("device kind"):
            reg.refuse([spelling], f"kernel '{k}'", where)
        reg.claim([spelling], f"kernel '{k}'")
