"""The hooks of a board kernel library: what it knows beyond its kernels.yaml, each named
by its ``library.yaml`` (``hooks: cmsis_nn``) and called through :class:`LibraryHooks`
by the placement (:mod:`tvmdev.plan.placement`), never by name.

A library with no hooks serves every operator its kernels match, asks no scratch of its
own and precomputes nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

from ...errors import TvmdevError
from ...model.graph import Model, Operator
from ...model.s8.call import CArray
from . import cmsis_nn, tvmdev_cm


class LibraryHooks(Protocol):
    """What a board library decides at generation time."""

    def decline(self, model: Model, op: Operator, params: dict[str, Any], arch: str,
                flash: int | None = None) -> str | None:
        """Why the library does not serve ``op`` on code path ``arch`` (None: it does);
        ``flash``: the bytes of flash the board lets it add (its ``library_flash``)."""

    def request(self, buffer: str, arch: str, params: dict[str, Any]) -> str:
        """The library's probe request for one operator's scratch (its kernel's
        ``buffer``)."""

    def scratch_bytes(self, buffer: str, arch: str, params: dict[str, Any]) -> int:
        """The bytes of one operator's scratch (its kernel's ``buffer``), for a library
        without a tree whose probe would ask (0 for a library with one)."""

    def precomputed(self, model: Model, op: Operator, params: dict[str, Any],
                    flash: int | None = None, arch: str = "") -> dict[str, CArray]:
        """Params fields computed once here instead of into a buffer at each call
        (``flash``: as :meth:`decline`'s; ``arch``: the core's code path)."""


HOOKS: dict[str, LibraryHooks] = {"cmsis_nn": cmsis_nn, "tvmdev_cm": tvmdev_cm}


def hooks_of(name: str | None, library: str, where: str) -> LibraryHooks | None:
    """The hooks ``name`` that ``library``'s ``where`` (its library.yaml) names."""
    if name is None:
        return None
    if name not in HOOKS:
        raise TvmdevError(f"library {library}: no hooks named '{name}'", where,
                          hint="hooks: " + ", ".join(sorted(HOOKS)))
    return HOOKS[name]
