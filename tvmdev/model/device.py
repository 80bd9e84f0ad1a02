"""The device spec: what ``tvmdev new-device`` is asked to generate."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import naming
from ..errors import TvmdevError, Where

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
