"""The device spec: what ``tvmdev new-device`` is asked to generate."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import naming
from ..errors import TvmdevError, Where
from .cnames import STATUS_SPELLINGS, Registry, Spelling, kind_spellings

_DEVICE_NAME = re.compile(r"[A-Za-z0-9_-]+\Z")


def device_name(given: str, where: Where | None = None) -> str:
    """Validate a device name as typed by a user and return its C spelling.

    Hyphens are accepted and become underscores, as devicetree compatibles do
    (``ethos-u`` -> ``ethos_u``); the result must be a lower snake_case C identifier.
    """
    if not isinstance(given, str) or not given:
        raise TvmdevError("device name must not be empty", where)
    if not _DEVICE_NAME.match(given):
        raise TvmdevError(f"device name '{given}' is not a valid C identifier", where,
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
        """The spec as recorded in a manifest."""
        return DeviceSpec(name=name, platforms=tuple(data["platforms"]),
                          options=tuple(sorted(data.get("options", {}).items())),
                          ops=tuple(data.get("ops", ("gemm", "matmul"))),
                          command=str(data.get("command", "")),
                          given=str(data.get("given", name)))


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
                        f"device '{spec.given or spec.name}'", None)
