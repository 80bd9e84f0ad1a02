"""The device spec: what ``tvmdev new-device`` is asked to generate."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import naming
from ..errors import TvmdevError, Where, shown
from .cnames import STATUS_SPELLINGS, Registry, Spelling, kind_spellings
from .ops import OPS

# Device instances a model may have: the executor's unwind masks are 32 bits, and the
# simulated accelerator (runtime/sim) is built to hold as many (TVMDEV_SIM_MAX_INSTANCES).
MAX_DEVICES = 32

_DEVICE_NAME = re.compile(r"[A-Za-z0-9_-]+\Z")


def device_name(given: str, where: Where | None = None) -> str:
    """Validate a device name as typed by a user and return its C spelling.

    Hyphens are accepted and become underscores, as devicetree compatibles do
    (``ethos-u`` -> ``ethos_u``); the result must be a lower snake_case C identifier.
    """
    if not isinstance(given, str) or not given:
        raise TvmdevError("device name must not be empty" if given == "" else
                          f"device name must be a string, not {shown(given)}", where)
    if not _DEVICE_NAME.match(given):
        raise TvmdevError(f"device name {shown(given)} is not a valid C identifier", where,
                          hint="use lower-case letters, digits, '_' or '-'")
    name = given.replace("-", "_")
    naming.check_identifier(name, "device name", where)
    if name != name.lower():
        raise TvmdevError(f"device name {shown(given)} must be lower case", where,
                          hint=f"try '{name.lower()}'")
    if name.startswith("_") or name.endswith("_") or "__" in name:
        raise TvmdevError(f"device name {shown(given)} has a leading, trailing or doubled '_'",
                          where, hint="for example: woofles, uart_accel, ethos_u")
    return name


@dataclass(frozen=True)
class DeviceMemory:
    """A device kind's own memory: its size and the alignment of addresses in it, in
    bytes (``tvmdev new-device NAME --memory SIZE[:ALIGN]``)."""

    size: int
    alignment: int


_SIZE = re.compile(r"([0-9]+)([KM]?)\Z")
_UNITS = {"": 1, "K": 1024, "M": 1024 * 1024}
MEMORY_HINT = "give SIZE[:ALIGN] in bytes, K or M, alignment a power of two: --memory 256K:32"
DEFAULT_ALIGNMENT = 16


def _bytes(text: str) -> int | None:
    found = _SIZE.match(text.strip().upper())
    return int(found.group(1)) * _UNITS[found.group(2)] if found else None


def parse_memory(given: str, where: Where | None = None, option: str = "--memory ",
                 hint: str = MEMORY_HINT) -> DeviceMemory:
    """``256K:32`` -> DeviceMemory(262144, 32); nonsense is one line with a hint. ``option``
    is how the message names the text (``--memory `` or ``--device-option memory=``)."""
    size_text, _, align_text = given.partition(":")
    size = _bytes(size_text)
    align = _bytes(align_text) if align_text else DEFAULT_ALIGNMENT
    what = f"{option}{shown(given)}"
    if size is None or align is None:
        raise TvmdevError(f"{what} is not a size", where, hint=hint)
    return memory_of(size, align, what, where, hint)


def memory_of(size: int, alignment: int, what: str, where: Where | None = None,
              hint: str = MEMORY_HINT) -> DeviceMemory:
    """A checked DeviceMemory: a positive size below 4 GiB (addresses are 32 bits), an
    alignment a power of two that divides it."""
    if alignment <= 0 or alignment & (alignment - 1):
        raise TvmdevError(f"{what}: the alignment {alignment} is not a power of two", where,
                          hint=hint)
    if not 0 < size < 1 << 32:
        raise TvmdevError(f"{what}: the size {size} is not between 1 byte and 4 GiB", where,
                          hint=hint)
    if size % alignment:
        raise TvmdevError(f"{what}: the size {size} is not a multiple of the alignment "
                          f"{alignment}", where, hint=hint)
    return DeviceMemory(size, alignment)


@dataclass(frozen=True)
class DeviceSpec:
    """One accelerator kind and the platforms to generate its C Device API for."""

    name: str
    platforms: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = ()
    ops: tuple[str, ...] = ("gemm", "matmul")
    command: str = ""
    given: str = field(default="", compare=False)
    memory: DeviceMemory | None = None  # the kind's own memory, if it declares one

    @property
    def camel(self) -> str:
        """The CamelCase spelling (``uart_accel`` -> ``UartAccel``)."""
        return naming.camel(self.name)

    @property
    def upper(self) -> str:
        """The macro spelling (``uart_accel`` -> ``UART_ACCEL``)."""
        return naming.upper(self.name)

    def option(self, name: str) -> Any:
        """The option called ``name``."""
        return dict(self.options)[name]

    def to_json(self) -> dict[str, Any]:
        """The data as JSON-compatible values."""
        out: dict[str, Any] = {
            "platforms": list(self.platforms), "options": dict(self.options),
            "ops": list(self.ops), "command": self.command, "given": self.given or self.name}
        if self.memory is not None:
            out["memory"] = {"size": self.memory.size, "alignment": self.memory.alignment}
        return out

    @staticmethod
    def from_json(name: str, data: dict[str, Any]) -> DeviceSpec:
        """The spec as recorded in a manifest (checked by :func:`specs_from_manifest`)."""
        return DeviceSpec(name=name, platforms=tuple(data["platforms"]),
                          options=tuple(sorted(data.get("options", {}).items())),
                          ops=tuple(data.get("ops", ("gemm", "matmul"))),
                          command=str(data.get("command", "")),
                          given=str(data.get("given", name)),
                          memory=(DeviceMemory(data["memory"]["size"],
                                               data["memory"]["alignment"])
                                  if "memory" in data else None))


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _manifest_problem(data: Any, platforms: Collection[str]) -> str | None:
    """What is wrong with one device record of a manifest, or None."""
    if not isinstance(data, dict):
        return "is not an object"
    if not _strings(data.get("platforms")) or not data["platforms"]:
        return "needs a list of names as 'platforms'"
    unknown = [p for p in data["platforms"] if p not in platforms]
    if unknown:
        return f"names unknown platform {shown(unknown[0])}"
    if not _strings(data.get("ops", [])):
        return "needs a list of names as 'ops'"
    unknown = [o for o in data.get("ops", []) if o not in OPS]
    if unknown:
        return f"names unknown op {shown(unknown[0])}"
    options = data.get("options", {})
    if not isinstance(options, dict) or not all(
            isinstance(v, (str, bool)) for v in options.values()):
        return "needs strings or true/false as 'options'"
    if not all(isinstance(data.get(k, ""), str) for k in ("command", "given")):
        return "needs strings as 'command' and 'given'"
    return _memory_problem(data.get("memory"))


def _memory_problem(memory: Any) -> str | None:
    """What is wrong with a manifest's 'memory' record, or None."""
    if memory is None:
        return None
    if not isinstance(memory, dict) or set(memory) != {"size", "alignment"} or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in memory.values()):
        return "needs {size, alignment} in bytes as 'memory'"
    try:
        memory_of(memory["size"], memory["alignment"], "memory")
    except TvmdevError as err:
        return f"has a bad 'memory' ({err.message})"
    return None


def specs_from_manifest(devices: Any, file: str, platforms: Collection[str],
                        hint: str | None = None) -> list[DeviceSpec]:
    """The device kinds a folder's manifest (``.tvmdev.json``) records, each checked,
    sorted by name: a record tvmdev cannot use is one line naming it (``hint``: how to
    recover)."""
    if devices is None:
        return []
    problem = None if isinstance(devices, dict) else "'devices' is not an object"
    specs = []
    for name, data in sorted(devices.items()) if problem is None else []:
        if not isinstance(name, str) or not _DEVICE_NAME.match(name) or name != name.lower():
            problem = f"the device name {shown(name)} is not one tvmdev makes"
        else:
            found = _manifest_problem(data, platforms)
            problem = f"the record of device {shown(name)} {found}" if found else None
        if problem is not None:
            break
        specs.append(DeviceSpec.from_json(name, data))
    if problem is not None:
        raise TvmdevError(f"the manifest is not one tvmdev wrote: {problem}", file, hint=hint)
    return specs


def check_collisions(specs: list[DeviceSpec], platforms: Iterable[str]) -> None:
    """Two device kinds whose C names (types, functions, macros, header guards and paths
    on any of ``platforms``) would clash, or a kind that clashes with the status header
    (``status``): refused, naming both."""
    registry = Registry()
    registry.claim([Spelling("macro", m) for m in STATUS_SPELLINGS]
                   + [Spelling("file", "tvm/device/status.h")], "tvm/device/status.h")
    platforms = tuple(platforms)
    for spec in specs:
        registry.refuse(kind_spellings(spec.name, platforms),
                        f"device {shown(spec.given or spec.name)}", None)
