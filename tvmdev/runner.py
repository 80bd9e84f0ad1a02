"""Build a model's firmware for a board, run it, and compare with the numpy reference.

The host board compiles the generated executor, device code and selected kernels with
gcc into one program and runs it. Device kinds not taken from ``--device-dir`` are
rendered as tvmdev's simulated accelerator, which counts every device call and can
inject a failure.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import aot, devicegen, external, platforms, reference, writer
from .boards import Board
from .devices import DeviceSpec
from .errors import TvmdevError
from .model import Model, with_offload
from .ops import OPS
from .registry import Library, build_registry, device_dir_libraries, load_library
from .render import banner, render
from .resources import platforms_dir, templates_dir, zephyr_app_dir

ATOL = 1e-5
RTOL = 1e-4
# Models with 4-bit weights: accelerated int4 kernels also quantise the activations (to
# int8 per row), so outputs are compared within 1% of their largest magnitude.
Q_ATOL_SCALE = 1e-2
Q_RTOL = 1e-2
SIM_COMMAND = "tvmdev run (simulated accelerator)"


@dataclass
class Prepared:
    model: Model
    board: Board
    build_dir: Path
    gen: aot.Generated
    sources: list[Path]
    include_dirs: list[Path]
    sim_kinds: list[str]
    exe: Path
    defines: list[str] = field(default_factory=list)
    link_flags: list[str] = field(default_factory=list)
    external: list[tuple[platforms.Platform, Path]] = field(default_factory=list)
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    cpu: str | None = None  # the CPU a qemu-user board emulates, when not the board's

    @property
    def harness(self) -> str:
        return str(self.board.support.get("harness", "host"))


@dataclass
class OpReport:
    index: int
    name: str
    op: str
    device: str | None
    kernel: str
    shape: list[int]
    max_abs: float | None
    max_rel: float | None


@dataclass
class RunResult:
    status: int
    status_name: str
    outputs: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]
    devices: dict[str, dict[str, int]] = field(default_factory=dict)
    ops: list[OpReport] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    quantized: bool = False  # the model has 4-bit weights: the looser tolerance applies

    def tolerance(self, name: str) -> tuple[float, float]:
        """(atol, rtol) for one output."""
        if not self.quantized:
            return ATOL, RTOL
        return Q_ATOL_SCALE * float(np.abs(self.reference[name]).max(initial=0.0)), Q_RTOL

    def errors(self, name: str) -> tuple[float, float]:
        got = self.outputs[name].astype(np.float64)
        ref = self.reference[name].astype(np.float64)
        diff = np.abs(got - ref)
        rel = diff / np.maximum(np.abs(ref), np.finfo(np.float32).tiny)
        return float(diff.max(initial=0.0)), float(rel.max(initial=0.0))

    def mismatches(self) -> list[str]:
        bad = []
        for name, got in self.outputs.items():
            ref = self.reference[name]
            atol, rtol = self.tolerance(name)
            if got.shape != ref.shape or not np.all(
                    np.abs(got.astype(np.float64) - ref) <= atol + rtol * np.abs(ref)):
                bad.append(name)
        return bad

    def balanced(self) -> list[str]:
        """Devices whose Open/Close or Activate/Deactivate do not balance."""
        bad = []
        for name, c in self.devices.items():
            if (c["open"] != c["close"] or c["activate"] != c["deactivate"]
                    or c["open_now"] != 0 or c["active_now"] != 0 or c["violations"] != 0):
                bad.append(name)
        return bad


def _ops_on_kind(model: Model, kind: str) -> tuple[str, ...]:
    used = {op.op for op in model.operators
            if op.device is not None and model.device(op.device).kind == kind}
    return tuple(o for o in OPS if o in used)


def _device_dir_spec(device_dir: Path, kind: str, platform: str) -> bool:
    manifest = writer.read_manifest(device_dir)
    entry = (manifest.get("devices") or {}).get(kind)
    if entry is None:
        return False
    if platform not in entry.get("platforms", []):
        raise TvmdevError(f"device kind '{kind}' in {device_dir} has no {platform} "
                          "implementation", str(device_dir),
                          hint=f"tvmdev new-device {kind} --platform {platform} -o {device_dir}")
    return True


def prepare(model: Model, board: Board, build_dir: Path, schedule: str = "eager",
            device_dir: Path | None = None, kernel_files: list[Path] | None = None,
            inputs: dict[str, np.ndarray] | None = None,
            external_dirs: dict[str, Path] | None = None) -> Prepared:
    """Generate everything a build needs into ``build_dir``. Firmware harnesses compile
    ``inputs`` in (default: the seeded random inputs). The board's offload binds its
    operators to a device of the offload kind; built-in kinds (kleidiai) use their own
    implementation, built against their external tree when there is one
    (``external_dirs`` by platform, else the platform's environment variable)."""
    build_dir = build_dir.resolve()
    dev_out = build_dir / "devices"
    off = board.offload
    if off.get("device") and off.get("kind"):
        model = with_offload(model, str(off["device"]), str(off["kind"]),
                             tuple(off.get("ops") or ()))
    builtin = {p.builtin_kind: p for p in platforms.all_platforms().values() if p.builtin_kind}
    sim_kinds, user_kinds = [], []
    kind_platform: dict[str, str] = {}
    for kind in model.kinds:
        if kind in builtin:
            kind_platform[kind] = builtin[kind].name
        elif device_dir is not None and _device_dir_spec(device_dir, kind, board.platform):
            user_kinds.append(kind)
            kind_platform[kind] = board.platform
        else:
            sim_kinds.append(kind)
            kind_platform[kind] = board.platform
    device_libs: list[Library] = []
    sources: list[Path] = []
    include_dirs = [build_dir / "model"]
    external_trees: list[tuple[platforms.Platform, Path]] = []
    board_plat = platforms.get(board.platform)
    if not board_plat.simulator:
        # No simulator on this platform: its own implementation stands in (on Zephyr,
        # with the skeleton driver the devicetree nodes bind to).
        sim_kinds = []
    options = tuple((o.name, True) for o in board_plat.options if o.kind == "flag")
    specs = [DeviceSpec(k, (kind_platform[k],), options=options if kind_platform[k] ==
                        board.platform else (), ops=_ops_on_kind(model, k),
                        command=SIM_COMMAND, given=k)
             for k in model.kinds if k not in user_kinds]
    # The shared files (status.h, and a Zephyr module's), then each generated kind's.
    files = [f for f in devicegen.project_files(specs)
             if f.path.startswith("include/") or board.support.get("harness") == "zephyr"]
    for spec in specs:
        files += devicegen.device_files(spec, sim=spec.name in sim_kinds)
    writer.sync(dev_out, files)
    include_dirs.append(dev_out / "include")
    if specs:
        if sim_kinds:
            include_dirs.append(templates_dir() / "sim")
            sources.append(templates_dir() / "sim/tvmdev_sim.c")
        for spec in specs:
            plat_name = kind_platform[spec.name]
            if board.support.get("harness") != "zephyr":  # Zephyr builds its module itself
                sources.append(dev_out / platforms.device_source(platforms.get(plat_name),
                                                                 spec.name))
            lib = dev_out / f"kernels/{spec.name}.yaml"
            if lib.is_file():
                device_libs.append(load_library(lib, "device", spec.name, spec.name,
                                                dev_out / "include"))
            plat = platforms.get(plat_name)
            root = external.tree(plat, external_dirs.get(plat.name) if external_dirs else None)
            if root is not None:
                external_trees.append((plat, root))
    # A platform's own kernel library for one kind (Metal's GEMM for kind "metal").
    lib_spec = board_plat.kernel_library
    if lib_spec and lib_spec["kind"] in model.kinds:
        import importlib

        generator = importlib.import_module(f"tvmdev.{lib_spec['generator']}")
        lib_dir = f"kernels/{lib_spec['kind']}/"
        writer.sync(dev_out, generator.library_files(board, prefix=lib_dir))
        device_libs.insert(0, load_library(dev_out / lib_dir / "kernels.yaml", "device",
                                           lib_spec["kind"], lib_spec["kind"],
                                           dev_out / lib_dir))
        include_dirs.append(dev_out / lib_dir)
    if device_dir is not None and user_kinds:
        include_dirs.append(device_dir.resolve() / "include")
        sources += [device_dir.resolve() / platforms.device_source(board_plat, kind)
                    for kind in user_kinds]
        device_libs += device_dir_libraries(device_dir, user_kinds)
    board_libs = [board.folder / k for k in board.kernels]
    registry = build_registry([*board_libs, *(kernel_files or [])], device_libs)
    gen = aot.generate(model, registry, schedule, command=f"tvmdev run {model.path}")
    writer.sync(build_dir / "model", list(gen.files))
    prefix = f"tvmgen_{model.name}"
    prep = Prepared(model, board, build_dir, gen, [], [], sim_kinds, build_dir / model.name)
    prep.external = external_trees
    for plat, root in external_trees:
        prep.defines += list(plat.external.get("defines") or [])
        include_dirs += [root / i for i in plat.external.get("include", ["."])]
    if inputs is None:
        inputs = reference.random_inputs(model)
    prep.inputs = inputs
    devices_ctx: list[dict[str, Any]] = [
        {"name": d.name, "type": f"tvm_device_{d.kind}_t", "sim": d.kind in sim_kinds,
         "camel": devicegen.device_context(DeviceSpec(d.kind, ()))["camel"]}
        for d in model.devices]
    main_ctx: dict[str, Any] = {
        "model": model.name, "prefix": prefix, "macro": prefix.upper(),
        "kinds": [{"kind": k, "platform": kind_platform[k]} for k in model.kinds],
        "sim": bool(sim_kinds),
        "board": board.name,
        "inputs": [{"name": n, "cname": model.tensors[n].cname, "shape": list(
            model.tensors[n].shape), "count": int(np.prod(model.tensors[n].shape)),
            "data": aot.c_bits(inputs[n]) if prep.harness != "host" else ""}
            for n in model.inputs],
        "outputs": [{"name": n, "cname": model.tensors[n].cname,
                     "count": int(np.prod(model.tensors[n].shape))} for n in model.outputs],
        "devices": devices_ctx,
    }
    files = []
    support_sources: list[Path] = []
    if prep.harness == "firmware":
        sup = board.support
        accel = list(sup.get("accelerator_uarts") or [])
        if not accel:
            raise TvmdevError(f"board {board.name} names no accelerator_uarts",
                              str(board.folder / f"{board.name}.yaml"))
        for i, dev in enumerate(devices_ctx):
            dev["uart"] = accel[i % len(accel)]
        console = int(sup.get("console_uart", 0))
        main_ctx["console_uart"] = console
        main_ctx["uarts"] = sorted({console, *(int(d["uart"]) for d in devices_ctx)})
        mem = board.memory
        files.append(writer.OutFile("link.ld", render(
            "firmware/link.ld.j2", banner=banner("c", f"tvmdev run --board {board.name}",
                                                 "owned"),
            board=board.name, code_origin=hex(mem["code"]["origin"]),
            code_length=hex(mem["code"]["length"]), ram_origin=hex(mem["ram"]["origin"]),
            ram_length=hex(mem["ram"]["length"]), stack_size=hex(mem.get("stack", 0x4000))),
            "owned"))
        support_sources = [board.folder / s for s in sup.get("sources") or []]
        include_dirs += [board.folder / i for i in sup.get("include") or []]
        include_dirs.append(platforms_dir() / "cmsis/include")
        prep.defines = [f"{k}={v}" for k, v in (sup.get("defines") or {}).items()]
        prep.link_flags = [f"-T{build_dir / 'link.ld'}",
                           f"-Wl,-Map={build_dir / (model.name + '.map')}"]
        prep.exe = build_dir / f"{model.name}.elf"
    if prep.harness == "zephyr":
        _prepare_zephyr(prep, main_ctx, dev_out, include_dirs, gen)
        return prep
    template = f"{prep.harness}/main.c.j2"
    files.append(writer.OutFile("main.c", render(
        template, banner=banner("c", f"tvmdev run {model.path}", "owned"), **main_ctx),
        "owned"))
    writer.sync(build_dir, files)
    prep.sources = [build_dir / "main.c", build_dir / "model" / f"{prefix}.c", *sources,
                    *support_sources, *gen.sources()]
    prep.include_dirs = _dedupe(include_dirs + gen.include_dirs())
    return prep


def _prepare_zephyr(prep: Prepared, ctx: dict[str, Any], dev_out: Path,
                    include_dirs: list[Path], gen: aot.Generated) -> None:
    """The model's side of zephyr_app: glue, sources list, devicetree overlay and Kconfig."""
    model, board, build_dir = prep.model, prep.board, prep.build_dir
    ref = reference.evaluate(model, prep.inputs)
    command = f"tvmdev run {model.path} --board {board.name}"
    for t in ctx["outputs"]:
        t["expect"] = aot.c_bits(ref[t["name"]])
    for d, dev in zip(ctx["devices"], model.devices, strict=True):
        d["kind"] = dev.kind
        d["dashed"] = dev.kind.replace("_", "-")
    atol, rtol = (Q_ATOL_SCALE, Q_RTOL) if model.quantized else (ATOL, RTOL)
    if model.quantized:  # scaled by the largest reference output, as on the host
        atol *= max(float(np.abs(ref[n]).max(initial=0.0)) for n in model.outputs)
    model_dir = build_dir / "model"
    app_sources = [model_dir / f"tvmgen_{model.name}.c", model_dir / "tvmdev_app.c",
                   *gen.sources()]
    files = [
        writer.OutFile("model/tvmdev_app.h", render("zephyr/tvmdev_app.h.j2",
                                                    banner=banner("c", command, "owned"),
                                                    **ctx), "owned"),
        writer.OutFile("model/tvmdev_app.c", render(
            "zephyr/tvmdev_app.c.j2", banner=banner("c", command, "owned"),
            atol=f"{atol:.9g}", rtol=f"{rtol:.9g}", **ctx), "owned"),
        writer.OutFile("model/tvmdev_model.cmake", render(
            "zephyr/tvmdev_model.cmake.j2", banner=banner("hash", command, "owned"),
            model=model.name, sources=[str(p) for p in app_sources],
            includes=[str(p) for p in include_dirs + gen.include_dirs()]), "owned"),
        writer.OutFile("app.overlay", render(
            "zephyr/overlay.dts.j2", banner_text=f"Generated by {command}", model=model.name,
            devices=ctx["devices"]), "owned"),
        writer.OutFile("tvmdev.conf", "".join(
            f"CONFIG_TVM_DEVICE_{k['kind'].upper()}=y\n" for k in ctx["kinds"]), "owned"),
    ]
    writer.sync(build_dir, files)
    run = board.run
    prep.exe = build_dir / "zephyr" / str(run.get("exe") or run.get("elf"))


def west_build(prep: Prepared) -> Path:
    """Build zephyr_app for the model with west (needs ZEPHYR_BASE)."""
    import shutil

    if not os.environ.get("ZEPHYR_BASE"):
        raise TvmdevError(f"ZEPHYR_BASE is not set (board {prep.board.name} builds with "
                          "Zephyr)", hint="point ZEPHYR_BASE at a Zephyr tree (3.4 or newer)")
    west = shutil.which("west")
    if west is None:
        raise TvmdevError("west is not installed", hint="pip install west")
    b, build_dir = prep.board, prep.build_dir
    env = dict(os.environ)
    env.update({k: str(v) for k, v in (b.support.get("env") or {}).items()})
    env.setdefault("ZEPHYR_TOOLCHAIN_VARIANT", "host")
    extra = [str(build_dir / "devices")] if (build_dir / "devices/zephyr/module.yml").is_file() \
        else []
    if env.get("ZEPHYR_EXTRA_MODULES"):
        extra.insert(0, env["ZEPHYR_EXTRA_MODULES"])
    cmd = [west, "build", "-b", str(b.support["zephyr_board"]), "-d",
           str(build_dir / "zephyr"), "-p", "auto", str(zephyr_app_dir()), "--",
           f"-DZEPHYR_EXTRA_MODULES={';'.join(extra)}",
           f"-DTVMDEV_MODEL_DIR={build_dir / 'model'}",
           f"-DDTC_OVERLAY_FILE={build_dir / 'app.overlay'}",
           f"-DOVERLAY_CONFIG={build_dir / 'tvmdev.conf'}"]
    (build_dir / "build.cmd").write_text(" ".join(cmd) + "\n")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise TvmdevError(f"the Zephyr build failed (west exited {proc.returncode}):\n{tail}",
                          str(build_dir), hint="the full command is in build.cmd")
    return prep.exe


def check_tools(board: Board) -> None:
    """The board's compiler and emulator are installed, else one clear error."""
    import shutil
    import sys

    if board.run.get("requires") == "macos" and sys.platform != "darwin":
        raise TvmdevError(f"board {board.name} runs on macOS only",
                          hint="its Metal code is built and run by the macOS workflow "
                               "(.github/workflows/macos.yml)")
    for tool in board.toolchain_tools:
        if shutil.which(tool) is None:
            raise TvmdevError(f"{tool} is not installed (needed for board {board.name})",
                              hint="on Debian: apt-get install gcc-arm-none-eabi "
                                   "libnewlib-arm-none-eabi qemu-system-arm")


def _dedupe(paths: list[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))


def build(prep: Prepared, extra_cflags: tuple[str, ...] = (), fault: str | None = None
          ) -> Path:
    """Compile the program or firmware; reuses the previous binary when nothing changed.
    ``fault`` is compiled into firmware (which has no environment to read it from)."""
    b = prep.board
    if b.run.get("method") == "west":
        return west_build(prep)
    macro = f"TVMGEN_{prep.model.name.upper()}"
    defines = [*b.defines, *prep.defines]
    if prep.harness == "host":
        defines.append(f"{macro}_TRACE_HOOK=tvmdev_host_trace")
    elif fault:
        defines.append(f'TVMDEV_SIM_FAIL="{fault}"')
    objects: list[Path] = []
    for plat, root in prep.external:
        objects += external.compile_objects(b.cc, ["-O2"], plat, root,
                                            prep.build_dir / f"{plat.name}-objects")
    cmd = [b.cc, *b.cflags, *extra_cflags, *(f"-D{d}" for d in defines),
           *(f"-I{d}" for d in prep.include_dirs), *(str(s) for s in prep.sources),
           *(str(o) for o in objects), *prep.link_flags, "-o", str(prep.exe), *b.ldflags]
    digest = hashlib.sha256(" ".join(cmd).encode())
    for src in prep.sources:
        digest.update(src.read_bytes())
    for inc in prep.include_dirs:
        for h in sorted(inc.rglob("*.h")):
            digest.update(h.read_bytes())
    for extra in prep.link_flags:
        if extra.startswith("-T"):
            digest.update(Path(extra[2:]).read_bytes())
    stamp = prep.build_dir / ".build-stamp"
    if prep.exe.is_file() and stamp.is_file() and stamp.read_text() == digest.hexdigest():
        return prep.exe
    (prep.build_dir / "build.cmd").write_text(" ".join(cmd) + "\n")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        stamp.unlink(missing_ok=True)
        raise TvmdevError(f"the build failed ({b.cc} exited {proc.returncode}):\n"
                          + proc.stderr.strip(), str(prep.build_dir),
                          hint="the full command is in build.cmd in the build folder")
    stamp.write_text(digest.hexdigest())
    return prep.exe


def _parse(stdout: str) -> tuple[int, str, dict[str, dict[str, int]], dict[str, list[int]]]:
    """The status line, device counters and (firmware) output data a harness printed."""
    status, name = None, ""
    devices: dict[str, dict[str, int]] = {}
    data: dict[str, list[int]] = {}
    current: list[int] | None = None
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:2] == ["tvmdev:", "status"] and len(parts) >= 3:
            status, name = int(parts[2]), (parts[3] if len(parts) > 3 else "")
        elif parts[:2] == ["tvmdev:", "device"] and len(parts) >= 3:
            devices[parts[2]] = {k: int(v) for k, v in (p.split("=") for p in parts[3:])}
        elif parts[:2] == ["tvmdev:", "output"] and len(parts) == 4:
            current = data.setdefault(parts[2], [])
        elif parts[:2] == ["tvmdev:", "data"] and current is not None:
            current.extend(int(w, 16) for w in parts[2:])
    if status is None:
        raise TvmdevError("the program printed no status line", hint=stdout[-2000:] or None)
    return status, name, devices, data


def _run_native(prep: Prepared, inputs: dict[str, np.ndarray], fault: str | None,
                threads: int, iterations: int, trace: bool
                ) -> tuple[subprocess.CompletedProcess[str], dict[str, np.ndarray], Path]:
    model = prep.model
    run_dir = prep.build_dir / "run"
    in_dir, out_dir, trace_dir = run_dir / "in", run_dir / "out", run_dir / "trace"
    for d in (in_dir, out_dir, trace_dir):
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("*.bin"):
            f.unlink()
    for name in model.inputs:
        arr = np.ascontiguousarray(inputs[name], dtype=np.float32)
        arr.tofile(in_dir / f"{model.tensors[name].cname}.bin")
    env = dict(os.environ)
    env.pop("TVMDEV_SIM_FAIL", None)
    if fault:
        env["TVMDEV_SIM_FAIL"] = fault
    if trace:
        env["TVMDEV_TRACE_DIR"] = str(trace_dir)
    argv = [*user_mode_prefix(prep), str(prep.exe), str(in_dir), str(out_dir)]
    if threads > 1 or iterations > 1:
        argv += [str(threads), str(iterations)]
    proc = _run(prep, argv, env)
    if proc.returncode not in (0, 1):
        raise TvmdevError(f"the program exited {proc.returncode}: "
                          f"{(proc.stderr or proc.stdout).strip()}", str(prep.exe))
    outputs = {}
    if proc.returncode in (0, 1):
        for name in model.outputs:
            path = out_dir / f"{model.tensors[name].cname}.bin"
            outputs[name] = np.fromfile(path, dtype=np.float32).reshape(
                model.tensors[name].shape)
    return proc, outputs, trace_dir


def _run(prep: Prepared, argv: list[str], env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=env,
                              timeout=float(prep.board.run.get("timeout", 120)))
    except subprocess.TimeoutExpired:
        raise TvmdevError(f"the program did not finish in {prep.board.run.get('timeout', 120)} s",
                          str(prep.exe)) from None


def user_mode_prefix(prep: Prepared, cpu: str | None = None) -> list[str]:
    """The emulator a qemu-user board runs programs under (empty for native boards)."""
    run = prep.board.run
    if run.get("method") != "qemu-user":
        return []
    return [str(run["qemu"]), "-cpu", cpu or prep.cpu or str(run.get("cpu", "max")),
            *map(str, run.get("args") or [])]


def qemu_command(prep: Prepared) -> list[str]:
    run = prep.board.run
    return [str(run["qemu"]), *map(str, run.get("args") or []), "-kernel", str(prep.exe)]


def execute(prep: Prepared, inputs: dict[str, np.ndarray] | None = None,
            fault: str | None = None, threads: int = 1, iterations: int = 1,
            trace: bool = True) -> RunResult:
    """Run the built program (or firmware, under QEMU) and compare with the reference."""
    model = prep.model
    if inputs is None:
        inputs = prep.inputs
    trace_dir: Path | None = None
    if prep.board.run.get("method") in ("native", "qemu-user"):
        proc, outputs, trace_dir = _run_native(prep, inputs, fault, threads, iterations,
                                               trace)
        status, status_name, devices, _ = _parse(proc.stdout)
    else:
        if inputs is not prep.inputs:
            raise TvmdevError("firmware runs on the inputs it was built with")
        native_exe = prep.board.run.get("method") == "west" and "qemu" not in prep.board.run
        proc = _run(prep, [str(prep.exe)] if native_exe else qemu_command(prep))
        status, status_name, devices, data = _parse(proc.stdout)
        if "tvmdev: end" not in proc.stdout:
            raise TvmdevError(f"the firmware stopped early (exit {proc.returncode})",
                              str(prep.exe), hint=(proc.stdout + proc.stderr)[-1500:])
        outputs = {}
        for name in model.outputs:
            t = model.tensors[name]
            words = np.array(data.get(t.cname, []), dtype=np.uint32)
            if words.size != int(np.prod(t.shape)):
                raise TvmdevError(f"the firmware printed {words.size} values for output "
                                  f"'{name}'", str(prep.exe))
            outputs[name] = words.view(np.float32).reshape(t.shape)
    ref = reference.evaluate(model, inputs)
    result = RunResult(status, status_name, outputs, {k: ref[k] for k in model.outputs},
                       devices, stdout=proc.stdout, stderr=proc.stderr,
                       exit_code=proc.returncode, quantized=bool(model.quantized))
    for op in model.operators:
        kernel = prep.gen.chains[op.index][0].name
        t = model.tensors[op.outputs[0]]
        max_abs = max_rel = None
        tr = trace_dir / f"{op.index}.bin" if trace_dir is not None else None
        if tr is not None and tr.is_file():
            got = np.fromfile(tr, dtype=np.float32).astype(np.float64)
            want = ref[op.outputs[0]].astype(np.float64).ravel()
            if got.size == want.size:
                diff = np.abs(got - want)
                max_abs = float(diff.max(initial=0.0))
                max_rel = float((diff / np.maximum(np.abs(want), 1e-30)).max(initial=0.0))
        result.ops.append(OpReport(op.index, op.name, op.op, op.device, kernel,
                                   list(t.shape), max_abs, max_rel))
    return result


def load_inputs(model: Model, inputs_dir: Path | None, seed: int = 0) -> dict[str, np.ndarray]:
    """``DIR/<input>.npy`` for each input when a folder is given, else seeded random."""
    if inputs_dir is None:
        return reference.random_inputs(model, seed)
    out = {}
    for name in model.inputs:
        path = inputs_dir / f"{name}.npy"
        if not path.is_file():
            raise TvmdevError(f"no input file for '{name}'", str(path),
                              hint=f"save it with numpy.save('{path}', array)")
        arr = np.load(path, allow_pickle=False)
        want = model.tensors[name].shape
        if tuple(arr.shape) != want:
            raise TvmdevError(f"input '{name}' has shape {list(arr.shape)}, the model wants "
                              f"{list(want)}", str(path))
        out[name] = arr.astype(np.float32)
    return out


def report(result: RunResult) -> list[str]:
    """The per-operator table, output errors and device balance, as lines."""
    rows = [("#", "operator", "op", "device", "kernel", "shape", "max abs err", "max rel err")]
    for r in result.ops:
        rows.append((str(r.index), r.name, r.op, r.device or "-", r.kernel, str(r.shape),
                     "-" if r.max_abs is None else f"{r.max_abs:.3g}",
                     "-" if r.max_rel is None else f"{r.max_rel:.3g}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.append("")
    for name in result.outputs if result.status == 0 else ():
        err_abs, err_rel = result.errors(name)
        ok = name not in result.mismatches()
        atol, rtol = result.tolerance(name)
        lines.append(f"output {name} {list(result.outputs[name].shape)}: max abs err "
                     f"{err_abs:.3g}, max rel err {err_rel:.3g}: "
                     f"{'within' if ok else 'OUTSIDE'} tolerance "
                     f"(atol {atol:.3g}, rtol {rtol:g}"
                     f"{', int4 weights' if result.quantized else ''})")
    if result.status != 0:
        lines.append("outputs: not compared (the run failed)")
    for name, c in result.devices.items():
        ok = name not in result.balanced()
        lines.append(f"device {name}: activate {c['activate']} / deactivate {c['deactivate']}, "
                     f"open {c['open']} / close {c['close']}, operators {c['operator']}: "
                     f"{'balanced' if ok else 'NOT BALANCED'}")
    return lines


def save_outputs(result: RunResult, model: Model, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, arr in result.outputs.items():
        path = folder / f"{name}.npy"
        np.save(path, arr)
        paths.append(path)
    (folder / "status.json").write_text(json.dumps({"status": result.status}) + "\n")
    return paths
