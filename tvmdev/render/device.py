"""Generation of the C Device API for the devices of one output folder.

A folder may hold several device kinds; the manifest there remembers each one's spec,
so files shared by all of them (the status header, CMakeLists.txt, the Zephyr module)
are rendered from the whole set, and regenerating one device leaves the others'
bytes unchanged.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import TvmdevError
from ..load.device_kernels import FLOAT_HEADER, Variant, struct_doc, variants
from ..load.platform import Platform, all_platforms, platform_by_name
from ..model import status
from ..model.device import DeviceSpec, check_collisions, specs_from_manifest
from ..model.ops import OPS, kernel_params, kernel_prototype, scratch_structs
from ..plan.kernels import portable_library
from ..resources import runtime_dir
from ..write.files import OutFile
from ..write.manifest import MANIFEST, MANIFEST_HINT, read_manifest
from .device_memory import layouts_scaffold, memory_context, memory_prototype, sim_tensors
from .engine import banner, c_declarator, render

_PORTABLE = "kernels/portable"  # the portable kernel library, under runtime/
_LOCAL_INCLUDE = re.compile(r'^#include "([^"/]+)"', re.MULTILINE)

_STYLE_BY_SUFFIX = {".h": "c", ".c": "c", ".m": "objc", ".metal": "c", ".txt": "hash",
                    ".yml": "hash", ".yaml": "hash", "": "hash", ".cmake": "hash"}


def style_for(path: str) -> str:
    """The banner comment style of a generated file, from its name."""
    return _STYLE_BY_SUFFIX.get(Path(path).suffix, "hash")


def _platforms(spec: DeviceSpec) -> tuple[Platform, ...]:
    return tuple(platform_by_name(p) for p in spec.platforms)


def option_context(spec: DeviceSpec) -> dict[str, Any]:
    """Option values of a spec, expanded with the facts platform.yaml gives for them."""
    values = dict(spec.options)
    out: dict[str, Any] = {}
    for plat in _platforms(spec):
        for opt in plat.options:
            value = values.get(opt.name, opt.default)
            if opt.kind == "flag":
                out[opt.name] = bool(value)
            elif opt.kind == "string":  # its C spellings too: acme-ai -> acme_ai, ACME_AI
                ident = str(value).replace("-", "_")
                out[opt.name] = {"value": value, "ident": ident, "macro": ident.upper()}
            else:
                out[opt.name] = {"value": value, **opt.choice(str(value)).as_dict()}
    return out


def _memory_prototypes(spec: DeviceSpec) -> dict[str, str]:
    """The prototypes of CopyTo, CopyFrom and Wait (without the ';'), laid out to fit."""
    dev, addr, fn = f"tvm_device_{spec.name}_t *tvm_dev", f"tvm_device_{spec.name}_addr_t", \
        f"int32_t TVMDevice{spec.camel}"
    return {"copy_to": c_declarator(f"{fn}CopyTo", [dev, f"{addr} dst", "const void *src",
                                                    "uint32_t nbytes"], width=90),
            "copy_from": c_declarator(f"{fn}CopyFrom", [dev, "void *dst", f"{addr} src",
                                                        "uint32_t nbytes"], width=90),
            "wait": c_declarator(f"{fn}Wait", [dev, "uint32_t timeout_ms"], width=90)}


def _driver_prototypes(name: str) -> dict[str, str]:
    """The prototypes of the Zephyr skeleton driver's functions, laid out to fit."""
    dev = "const struct device *dev"
    return {"write": c_declarator(f"static int {name}_write",
                                  [dev, "uint32_t addr", "const void *src", "size_t nbytes"]),
            "read": c_declarator(f"static int {name}_read",
                                 [dev, "uint32_t addr", "void *dst", "size_t nbytes"]),
            "irq": c_declarator(f"static void {name}_irq",
                                ["const struct device *port", "struct gpio_callback *cb",
                                 "gpio_port_pins_t pins"])}


def device_context(spec: DeviceSpec) -> dict[str, Any]:
    """Names and options of one device kind, as templates use them."""
    camel = spec.camel
    kernels = scaffolded_kernels(spec)
    return {
        "name": spec.name,
        "dashed": spec.name.replace("_", "-"),
        "camel": camel,
        "macro": f"TVM_DEVICE_{spec.upper}",
        "macro_short": spec.upper,
        "tag": f"tvm_device_{spec.name}",
        "type": f"tvm_device_{spec.name}_t",
        "guard": f"TVM_DEVICE_{spec.upper}_H_",
        "fn": {fn: f"TVMDevice{camel}{fn.capitalize()}" for fn in
               ("init", "activate", "open", "close", "deactivate", "destroy", "wait")}
        | {"set_open_timeout": f"TVMDevice{camel}SetOpenTimeout",
           "copy_to": f"TVMDevice{camel}CopyTo", "copy_from": f"TVMDevice{camel}CopyFrom"},
        # The device's own memory (--memory), or None: the copy functions exist with it;
        # its names, as the executor and the simulated device use them (.device_memory).
        "memory": memory_context(spec),
        "addr_type": f"tvm_device_{spec.name}_addr_t",
        "proto": _memory_prototypes(spec),
        "driver": _driver_prototypes(spec.name),
        "user_tag": f"tvm_device_{spec.name}_user",
        "opts": option_context(spec),
        "ops": list(spec.ops),
        # The CMake target of its kernels (src/kernels/<name>/), if it has any.
        "kernels_target": f"tvm_kernels_{spec.name}" if kernels else "",
    }


def platform_context(plat: Platform, spec: DeviceSpec) -> dict[str, Any]:
    """Names and the handle of one platform, as its templates use them."""
    opts = option_context(spec)
    handle_type = plat.handle_type.format(**opts)
    return {
        "name": plat.name,
        "guard": f"TVM_DEVICE_{spec.upper}_{plat.name.upper()}_H_",
        "user_guard": f"TVM_DEVICE_{spec.upper}_{plat.name.upper()}_USER_H_",
        "handle_type": handle_type if handle_type.endswith("*") else handle_type + " ",
        "handle_name": plat.handle_name,
        "handle_doc": plat.handle_doc,
    }


def _rendered(template: str, path: str, kind: str, command: str, **ctx: Any) -> OutFile:
    text = render(template, banner=banner(style_for(path), command, kind),
                  api_version=status.API_VERSION, **ctx)
    return OutFile(path, text, kind)


def status_header(path: str, command: str) -> OutFile:
    """``tvm/device/status.h``: the status codes every device and kernel returns."""
    return _rendered("status.h.j2", path, "owned", command, statuses=status.STATUSES)


def _variant_context(v: Variant, memory_kind: str | None = None) -> dict[str, Any]:
    """One scaffolded kernel: name, prototype, arguments, registry entry, and for an int8
    one its params struct documented from the portable header that declares it.
    ``memory_kind``: the kind, when it has memory of its own (its kernels take addresses:
    :mod:`.device_memory`)."""
    opdef = OPS[v.op]
    dtypes = dict(v.dtypes)
    args = [n for _, n in kernel_params(opdef, dtypes, v.params_struct)]
    where, doc, definition = (struct_doc(v.portable.include_dir / v.header, v.params_struct)
                              if v.int8 else ("", [], []))
    return {
        "name": v.name, "portable": v.portable.name, "int8": v.int8, "header": v.header,
        "params_struct": v.params_struct, "struct_doc": doc, "struct_def": definition,
        "struct_header": where,
        "prototype": kernel_prototype(opdef, v.name, dtypes, v.params_struct),
        "args": ", ".join(args),
        "arg_meta": "{" + ", ".join(f"{a}: [{dtypes.get(a, 'T0')}]"
                                    for a in (*opdef.inputs, *opdef.outputs)) + "}",
        **({"prototype": memory_prototype(opdef, v.name, memory_kind, dtypes,
                                          v.params_struct),
            "tensors": sim_tensors(opdef, dtypes, v.params_struct),
            "takes_scratch": v.params_struct in scratch_structs()} if memory_kind else {}),
    }


def kernel_contexts(spec: DeviceSpec) -> list[dict[str, Any]]:
    """The kernels a device kind claims (``--ops``), one source file per op holding each
    of its forms (float, int8: :func:`~tvmdev.load.device_kernels.variants`)."""
    out = []
    portable = portable_library()
    for opname in spec.ops:
        forms = [_variant_context(v, spec.name if spec.memory else None)
                 for v in variants(spec.name, opname, portable)]
        out.append({"op": opname, "source": f"src/kernels/{spec.name}/{opname}.c",
                    "variants": forms, "float": any(not f["int8"] for f in forms)})
    return out


def declarations(kernels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every kernel of the header in order, an int8 one (with its comment) set apart by
    blank lines."""
    out: list[dict[str, Any]] = []
    for k in kernels:
        for form in k["variants"]:
            gap = bool(out) and (form["int8"] or out[-1]["int8"])
            out.append({**form, "op": k["op"], "gap": gap})
    return out


def kernel_headers(kernels: list[dict[str, Any]]) -> list[str]:
    """The portable headers a device's kernel header includes: the float library's, then
    those declaring the int8 params structs its kernels take and the portable kernels
    (and their params structs) its kernels delegate to (tvmk_rawint.h for a raw-integer
    op's)."""
    portable = {k.name: k.header for k in portable_library().kernels}
    int8 = {f["header"] for k in kernels for f in k["variants"] if f["int8"]}
    delegates = {portable[f["portable"]] for k in kernels for f in k["variants"]}
    return [FLOAT_HEADER, *sorted((int8 | delegates) - {FLOAT_HEADER})]


def scaffolded_kernels(spec: DeviceSpec) -> list[dict[str, Any]]:
    """The kernels tvmdev scaffolds for a device kind: none for a built-in kind, which
    ships its own."""
    if any(p.builtin_kind for p in _platforms(spec)):
        return []
    return kernel_contexts(spec)


def portable_sources(specs: list[DeviceSpec], public_too: bool = False) -> list[str]:
    """The files of the portable library (names under runtime/kernels/portable) that the
    scaffolded kernels of ``specs`` delegate to: the sources of those kernels and the
    local headers they include, other than the library's public headers (``public_too``:
    only the public headers they include, a source shared by int8 and int16 forms)."""
    kernels = {k.name: k for k in portable_library().kernels}
    folder = (runtime_dir() / _PORTABLE).resolve()
    names = {src.name for spec in specs for k in scaffolded_kernels(spec)
             for form in k["variants"] for src in kernels[form["portable"]].sources}
    public, included = {k.header for k in kernels.values()}, set()
    todo = sorted(names)
    while todo:
        for header in _LOCAL_INCLUDE.findall((folder / todo.pop()).read_text(encoding="utf-8")):
            if header in public:
                included.add(header)
            elif header not in names and (folder / header).is_file():
                names.add(header)
                todo.append(header)
    return sorted(included if public_too else names)


def portable_headers(specs: list[DeviceSpec]) -> list[str]:
    """The public headers of the portable library the kernels of ``specs`` include:
    tvmk_portable.h, those declaring the int8 params structs (tvmk_s8.h, ...), and any
    other a copied source includes."""
    named = kernel_headers([k for s in specs for k in scaffolded_kernels(s)])
    return named + [h for h in portable_sources(specs, True) if h not in named]


def _portable_files(names: list[str], headers: list[str], used: list[Platform]
                    ) -> list[OutFile]:
    """Copies of the portable files ``names`` (from :func:`portable_sources`) and of the
    library's public ``headers``, so that the folder builds on its own. A copy that a
    platform of the folder makes already (the kleidiai kind ships tvmk_portable.h) is
    left to it."""
    if not names:
        return []
    copies = [(f"{_PORTABLE}/{h}", f"include/{h}") for h in headers]
    copies += [(f"{_PORTABLE}/{n}", f"src/portable/{n}") for n in names]
    made = {(r.source, r.path) for p in used for r in p.files
            if r.source is not None and r.when is None}
    return [OutFile(dest, _shipped(src), "owned") for src, dest in copies
            if (src, dest) not in made]


def _shipped(name: str) -> str:
    """A source file tvmdev ships under runtime/, as it is."""
    return (runtime_dir() / name).read_text(encoding="utf-8")


def device_files(spec: DeviceSpec, sim: bool = False) -> list[OutFile]:
    """The files of one device kind: its generic header, its kernel library and each
    platform's files. ``sim`` renders tvmdev's simulated accelerator instead of the
    scaffolds (``tvmdev run`` without ``--device-dir``); every file is then owned."""
    dev = device_context(spec)
    files = [_rendered("device.h.j2", f"include/tvm/device/{spec.name}.h", "owned",
                       spec.command, dev=dev)]
    kernels = scaffolded_kernels(spec)
    scaffold = "owned" if sim else "scaffold"
    if kernels:
        files.append(_rendered("device_kernels.h.j2", f"include/tvm/kernels/{spec.name}.h",
                               "owned", spec.command, dev=dev, kernels=kernels,
                               headers=kernel_headers(kernels),
                               declarations=declarations(kernels)))
        files.append(_rendered("device_kernels.yaml.j2", f"kernels/{spec.name}.yaml",
                               "owned", spec.command, dev=dev, kernels=kernels))
        for k in kernels:
            files.append(_rendered("device_kernel.c.j2", k["source"], scaffold, spec.command,
                                   dev=dev, k=k, sim=sim))
        if spec.memory is not None and not sim:  # the constants it loads: their layout
            files.append(layouts_scaffold(spec, dev, [k["op"] for k in kernels]))
    if sim and spec.memory is not None:  # its memory, tvmdev's simulated one
        files.append(_rendered("sim_memory.c.j2", f"src/device/{spec.name}/sim_memory.c",
                               "owned", spec.command, dev=dev))
    fmt = {"name": spec.name, "dashed": dev["dashed"]}
    fmt |= {k: v["value"] for k, v in dev["opts"].items()
            if isinstance(v, dict) and "ident" in v}  # string options: {vendor}
    for plat in _platforms(spec):
        plat_ctx = platform_context(plat, spec)
        for rule in plat.files:
            if rule.when and not dev["opts"].get(rule.when):
                continue
            path = rule.path.format(**fmt)
            if rule.source is not None:
                files.append(OutFile(path, _shipped(rule.source), rule.kind))
                continue
            assert rule.template is not None
            files.append(_rendered(rule.template, path,
                                   "owned" if sim else rule.kind, spec.command,
                                   dev=dev, plat=plat_ctx, opts=dev["opts"], sim=sim))
    return files


def _vendors(devs: list[dict[str, Any]]) -> list[str]:
    """The devicetree vendor prefixes of the devices with a Zephyr driver, sorted."""
    return sorted({d["opts"]["vendor"]["value"] for d in devs
                   if d["opts"].get("zephyr_driver") and "vendor" in d["opts"]})


def project_files(specs: list[DeviceSpec]) -> list[OutFile]:
    """Files shared by every device of the folder."""
    names = [s.name for s in specs]
    command = "tvmdev new-device; shared by the devices of this folder (see .tvmdev.json)"
    files = [status_header("include/tvm/device/status.h", command)]
    used = [p for p in all_platforms().values()
            if any(p.name in s.platforms for s in specs)]
    zephyr_frags: list[str] = []
    standalone_frags: list[str] = []
    for plat in used:
        devs = [device_context(s) for s in specs if plat.name in s.platforms]
        frag = render(f"{plat.name}/templates/cmake.j2", devices=devs,
                      tree=plat.tree).rstrip("\n")
        (zephyr_frags if plat.cmake_context == "zephyr" else standalone_frags).append(frag)
        for rule in plat.project_files:
            assert rule.template is not None
            if rule.when and not any(d["opts"].get(rule.when) for d in devs):
                continue
            files.append(_rendered(rule.template, rule.path, rule.kind, command, devices=devs,
                                   any_driver=any(d["opts"].get("zephyr_driver")
                                                  for d in devs),
                                   vendors=_vendors(devs)))
    portable = portable_sources(specs)
    files += _portable_files(portable, portable_headers(specs), used)
    kernel_libraries = [{"name": s.name, "target": device_context(s)["kernels_target"],
                         "sources": [k["source"] for k in scaffolded_kernels(s)]}
                        for s in specs if scaffolded_kernels(s)]
    standalone = [p.name for p in used if p.cmake_context == "standalone"]
    files.append(_rendered(
        "CMakeLists.txt.j2", "CMakeLists.txt", "owned", command, device_names=names,
        zephyr_fragments=zephyr_frags, standalone_fragments=standalone_frags,
        standalone_platforms=standalone, kernel_libraries=kernel_libraries,
        portable_sources=[f"src/portable/{n}" for n in portable if n.endswith(".c")],
        default_platforms=[p.name for p in used
                           if p.cmake_context == "standalone" and p.cmake_default]))
    return files


def folder_specs(out_dir: Path, new: DeviceSpec) -> list[DeviceSpec]:
    """The device kinds of ``out_dir`` once ``new`` is added to (or replaces) its entry.

    Platforms accumulate: generating a device for cmsis into a folder that holds it for
    posix keeps posix.
    """
    manifest = read_manifest(out_dir)
    specs = {s.name: s for s in specs_from_manifest(
        manifest.get("devices"), str(out_dir / MANIFEST), all_platforms(), MANIFEST_HINT)}
    old = specs.get(new.name)
    if old is not None and old.given != new.given:
        raise TvmdevError(
            f"device '{new.given}' collides with '{old.given}', already in this folder, "
            f"once converted to C (both are {new.name})",
            str(out_dir), hint="use the same spelling, or another name")
    if old is not None:
        merged = old.platforms + tuple(p for p in new.platforms if p not in old.platforms)
        options = dict(old.options)
        options.update(dict(new.options))
        new = DeviceSpec(new.name, merged, tuple(sorted(options.items())), new.ops,
                         new.command, new.given, new.memory or old.memory)
    specs[new.name] = new
    ordered = [specs[k] for k in sorted(specs)]
    check_collisions(ordered, all_platforms())
    return ordered


def user_device_specs(device_dir: Path) -> tuple[DeviceSpec, ...]:
    """The device kinds of a new-device folder (``--device-dir``), from its manifest; a
    path that is not such a folder is one line."""
    hint = "--device-dir takes a folder made by tvmdev new-device"
    if not device_dir.is_dir():
        raise TvmdevError("no such folder" if not device_dir.exists() else
                          "is not a folder", str(device_dir), hint=hint)
    specs = specs_from_manifest(read_manifest(device_dir).get("devices"),
                                str(device_dir / MANIFEST), all_platforms(), MANIFEST_HINT)
    if not specs:
        raise TvmdevError("no devices here (no .tvmdev.json from tvmdev new-device)",
                          str(device_dir), hint=hint)
    return tuple(specs)


def manifest_for(specs: list[DeviceSpec]) -> dict[str, Any]:
    """The manifest records of a device folder holding ``specs``."""
    return {"tool": "tvmdev", "version": __version__,
            "devices": {s.name: s.to_json() for s in specs}}


def generate(specs: list[DeviceSpec]) -> list[OutFile]:
    """Every file of a folder holding ``specs``."""
    files = project_files(specs)
    for spec in specs:
        files.extend(device_files(spec))
    return files
