"""Device partition: which implementation each device kind of a model gets on a board.

* ``builtin``: a platform implements the kind itself (``kleidiai``);
* ``user``: the user's own implementation, from a ``new-device`` folder;
* ``sim``: tvmdev's simulated accelerator (counts calls, injects faults), on platforms
  that can render it;
* ``scaffold``: the platform's scaffold stands in (Zephyr, with its skeleton driver).

The board's offload is applied first: operators of its ops that no device runs go to a
device of its kind.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import TvmdevError, Where
from ..load.board import Board
from ..load.platform import Platform, all_platforms, platform_by_name
from ..model.graph import Device, Model
from ..model.ops import OPS


@dataclass(frozen=True)
class KindPlan:
    kind: str
    platform: str  # the platform its device code is generated for
    origin: str  # "builtin", "user", "sim" or "scaffold"
    ops: tuple[str, ...]  # the ops the model runs on devices of this kind


@dataclass(frozen=True)
class DevicePlan:
    model: Model  # with the board's offload applied
    kinds: tuple[KindPlan, ...]

    def with_origin(self, *origins: str) -> tuple[KindPlan, ...]:
        """The kinds whose implementation comes from one of ``origins``."""
        return tuple(k for k in self.kinds if k.origin in origins)

    def kind(self, name: str) -> KindPlan:
        """The plan of the kind called ``name``."""
        return next(k for k in self.kinds if k.kind == name)

    @property
    def sim_kinds(self) -> tuple[str, ...]:
        """The kinds that run as tvmdev's simulated accelerator."""
        return tuple(k.kind for k in self.with_origin("sim"))


def with_offload(model: Model, device: str, kind: str, ops: tuple[str, ...]) -> Model:
    """The model with the operators in ``ops`` that no device runs bound to a new device
    instance ``device`` of ``kind``. Unchanged when no operator qualifies."""
    picked = [op for op in model.operators if op.device is None and op.op in ops]
    if not picked:
        return model
    name = device
    while any(d.name.lower() == name.lower() for d in model.devices):  # as C sees them
        name += "_"
    new_ops = tuple(replace(op, device=name) if op in picked else op for op in model.operators)
    dev = Device(name, kind, Where(model.path))
    return replace(model, devices=(*model.devices, dev), operators=new_ops)


def ops_on_kind(model: Model, kind: str) -> tuple[str, ...]:
    """The ops the model runs on devices of ``kind``, in the registry's op order."""
    used = {op.op for op in model.operators
            if op.device is not None and model.device(op.device).kind == kind}
    return tuple(o for o in OPS if o in used)


def plan_devices(model: Model, board: Board,
                 user_kinds: dict[str, tuple[str, ...]] | None = None) -> DevicePlan:
    """Partition the model's device kinds. ``user_kinds``: the kinds of a new-device
    folder, with the platforms each was generated for."""
    if board.offload is not None:
        model = with_offload(model, board.offload.device, board.offload.kind,
                             board.offload.ops)
    builtin: dict[str, Platform] = {p.builtin_kind: p for p in all_platforms().values()
                                    if p.builtin_kind}
    board_plat = platform_by_name(board.platform)
    kinds = []
    for kind in model.kinds:
        ops = ops_on_kind(model, kind)
        if kind in builtin:
            kinds.append(KindPlan(kind, builtin[kind].name, "builtin", ops))
        elif user_kinds and kind in user_kinds:
            if board.platform not in user_kinds[kind]:
                raise TvmdevError(f"device kind '{kind}' of the device folder has no "
                                  f"{board.platform} implementation",
                                  hint=f"tvmdev new-device {kind} --platform {board.platform}")
            kinds.append(KindPlan(kind, board.platform, "user", ops))
        elif user_kinds is not None:
            dev = next(d for d in model.devices if d.kind == kind)
            raise TvmdevError(f"device '{dev.name}' is of kind '{kind}', which the "
                              f"--device-dir folder does not hold (it holds "
                              f"{', '.join(sorted(user_kinds))})", dev.where,
                              hint=f"tvmdev new-device {kind} --platform {board.platform} "
                                   "-o <that folder>, or fix the kind's spelling")
        else:
            origin = "sim" if board_plat.simulator else "scaffold"
            kinds.append(KindPlan(kind, board.platform, origin, ops))
    return DevicePlan(model, tuple(kinds))
