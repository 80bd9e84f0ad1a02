"""The device spec: what ``tvmdev new-device`` is asked to generate."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from .. import naming
from ..errors import TvmdevError, Where, shown
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
    naming.check_length(given, "device name", where)
    if not _DEVICE_NAME.match(given):
        raise TvmdevError(f"device name {shown(given)} is not a valid C identifier", where,
                          hint="use lower-case letters, digits, '_' or '-'")
    name = given.replace("-", "_")
    naming.check_identifier(name, "device name", where)
    if name != name.lower():
        raise TvmdevError(f"device name '{given}' must be lower case", where,
                          hint=f"try '{name.lower()}'")
    if name.startswith("_") or name.endswith("_") or "__" in name:
        raise TvmdevError(f"device name '{given}' has a leading, trailing or doubled '_'",
                          where, hint="for example: woofles, uart_accel, ethos_u")
    return name


@dataclass(frozen=True)
class DeviceSpec:
    """One accelerator kind and the platforms to generate its C Device API for."""

    name: str
    platforms: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = ()
    ops: tuple[str, ...] = ("gemm", "matmul")
    command: str = ""
    given: str = field(default="", compare=False)

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
        return {"platforms": list(self.platforms), "options": dict(self.options),
                "ops": list(self.ops), "command": self.command, "given": self.given or self.name}

    @staticmethod
    def from_json(name: str, data: dict[str, Any]) -> DeviceSpec:
        """The spec as recorded in a manifest (checked by :func:`specs_from_manifest`)."""
        return DeviceSpec(name=name, platforms=tuple(data["platforms"]),
                          options=tuple(sorted(data.get("options", {}).items())),
                          ops=tuple(data.get("ops", ("gemm", "matmul"))),
                          command=str(data.get("command", "")),
                          given=str(data.get("given", name)))


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _manifest_problem(name: Any, data: Any, platforms: Collection[str]) -> str | None:
    """What is wrong with one manifest entry, or None."""
    if not isinstance(name, str) or not _DEVICE_NAME.match(name) or name != name.lower():
        return "its name is not a device name"
    if not isinstance(data, dict):
        return "it is not a mapping"
    if not _strings(data.get("platforms")) or not data["platforms"]:
        return "platforms must be a list of platform names"
    unknown = [p for p in data["platforms"] if p not in platforms]
    if unknown:
        return f"unknown platform {shown(unknown[0])}"
    if not _strings(data.get("ops", [])) or any(o not in OPS for o in data.get("ops", [])):
        return "ops must be a list of op names"
    options = data.get("options", {})
    if not isinstance(options, dict) or not all(
            isinstance(v, (str, bool)) for v in options.values()):
        return "options must map option names to strings or true/false"
    if not all(isinstance(data.get(k, ""), str) for k in ("command", "given")):
        return "command and given must be strings"
    return None


def specs_from_manifest(devices: Any, file: str, platforms: Collection[str]
                        ) -> list[DeviceSpec]:
    """The device kinds a folder's manifest (``.tvmdev.json``) records, each checked,
    sorted by name; a malformed entry is one line naming it."""
    if devices is None:
        return []
    hint = "regenerate the folder with tvmdev new-device (or restore .tvmdev.json)"
    if not isinstance(devices, dict):
        raise TvmdevError(f"the manifest's devices must be a mapping, not {shown(devices)}",
                          file, hint=hint)
    specs = []
    for name, data in sorted(devices.items()):
        problem = _manifest_problem(name, data, platforms)
        if problem is not None:
            raise TvmdevError(f"the manifest's entry for device {shown(name)} is malformed: "
                              f"{problem}", file, hint=hint)
        specs.append(DeviceSpec.from_json(name, data))
    return specs


def check_collisions(specs: list[DeviceSpec]) -> None:
    """Two device kinds whose C names (type, functions or macros) would clash."""
    seen: dict[tuple[str, str], DeviceSpec] = {}
    for spec in specs:
        for form, key in (("type", spec.name), ("function", spec.camel), ("macro", spec.upper)):
            other = seen.setdefault((form, key), spec)
            if other.name != spec.name:
                raise TvmdevError(
                    f"device '{spec.given or spec.name}' collides with "
                    f"'{other.given or other.name}' once converted to C (both give {form} "
                    f"name {key})", hint="rename one of them")
