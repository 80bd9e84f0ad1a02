"""The platform registry: one folder per platform under ``platforms/``.

Each folder holds a ``platform.yaml`` describing the platform and a ``templates/``
folder. Adding a platform means adding a folder; nothing here names a platform.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from ..resources import platforms_dir
from . import yamlio
from .schema import validate
from .tree import Tree, load_tree


@dataclass(frozen=True)
class OptionChoice:
    """One value of a platform option, with the facts templates need about it."""

    value: str
    facts: tuple[tuple[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        """The facts of this choice, as templates use them."""
        return dict(self.facts)


@dataclass(frozen=True)
class PlatformOption:
    """A command-line option a platform accepts (for example ``--cmsis-driver``)."""

    name: str
    flag: str
    help: str
    kind: str  # "choice", "flag" or "string"
    choices: tuple[OptionChoice, ...]
    default: str | bool
    pattern: str | None = None  # a string option's syntax (a regular expression)
    syntax: str = ""  # the syntax in words, for the hint when a value does not match
    requires: str | None = None  # a flag option this one needs set, if any

    def choice(self, value: str) -> OptionChoice:
        """The choice called ``value``."""
        for c in self.choices:
            if c.value == value:
                return c
        raise KeyError(value)


@dataclass(frozen=True)
class FileRule:
    """A file a platform generates: a template rendered (or a runtime source copied), its
    output path pattern and its ownership."""

    path: str
    kind: str
    template: str | None = None  # a Jinja2 template under platforms/ or templates/
    source: str | None = None  # a file under runtime/, copied as it is
    when: str | None = None  # the name of a flag option that must be set, if any


@dataclass(frozen=True)
class KernelLibrary:
    """A kernel library the platform renders for one device kind (Metal's GEMM)."""

    kind: str
    generator: str  # what renders its files (tvmdev.run.job.LIBRARY_FILES)


@dataclass(frozen=True)
class CheckSpec:
    """How ``tvmdev check`` preprocesses this platform's sources."""

    compiler: str = "gcc"
    include: tuple[Path, ...] = ()
    defines: tuple[str, ...] = ()  # {macro}: TVM_DEVICE_<NAME>


@dataclass(frozen=True)
class Platform:
    """A platform as described by ``platforms/<name>/platform.yaml``."""

    name: str
    description: str
    handle_type: str
    handle_name: str
    handle_doc: str
    files: tuple[FileRule, ...]
    project_files: tuple[FileRule, ...]
    options: tuple[PlatformOption, ...]
    cmake_context: str  # "zephyr" (a Zephyr module) or "standalone" (a CMake project)
    cmake_default: bool  # built by default in a standalone CMake project
    check: CheckSpec
    builtin_kind: str | None  # the device kind this platform implements itself, if any
    simulator: bool  # its templates can render tvmdev's simulated accelerator
    simulated_memory: bool  # ... with memory of its own (docs/device-memory.md)
    kernel_library: KernelLibrary | None
    tree: Tree | None  # a pinned third-party tree its device code compiles against
    folder: Path

    def option(self, name: str) -> PlatformOption:
        """The option called ``name``."""
        for opt in self.options:
            if opt.name == name:
                return opt
        raise KeyError(name)

    @property
    def device_source(self) -> str:
        """The path pattern of a device's implementation (src/device/{name}/...)."""
        for rule in self.files:
            if rule.path.startswith("src/device/"):
                return rule.path
        raise AssertionError(f"internal error: platform {self.name} has no device source")


def _file_rules(node: Any) -> tuple[FileRule, ...]:
    return tuple(FileRule(str(r["path"]), str(r["kind"]), r.get("template"), r.get("source"),
                          r.get("when")) for r in node or ())


def _options(node: Any) -> tuple[PlatformOption, ...]:
    options = []
    for oname, onode in (node or {}).items():
        kind = str(onode.get("type", "choice"))
        choices = tuple(OptionChoice(str(v), tuple(sorted((facts or {}).items())))
                        for v, facts in (onode.get("choices") or {}).items())
        default = onode.get("default", False if kind == "flag" else "")
        options.append(PlatformOption(oname, str(onode["flag"]), str(onode["help"]), kind,
                                      choices, default, onode.get("pattern"),
                                      str(onode.get("syntax", "")), onode.get("requires")))
    return tuple(options)


def load_platform(folder: Path) -> Platform:
    """Load and check ``folder/platform.yaml``."""
    path = folder / "platform.yaml"
    doc = yamlio.load(path)
    validate(doc, "platform", str(path))
    if doc["name"] != folder.name:
        raise TvmdevError(f"platform name '{doc['name']}' must match its folder "
                          f"'{folder.name}'", doc.where("name"))
    handle, cmake, check = doc["handle"], doc.get("cmake") or {}, doc.get("check") or {}
    lib = doc.get("kernel_library")
    return Platform(
        name=doc["name"], description=doc["description"], handle_type=handle["type"],
        handle_name=handle["name"], handle_doc=handle.get("doc", ""),
        files=_file_rules(doc["files"]), project_files=_file_rules(doc.get("project_files")),
        options=_options(doc.get("options")),
        cmake_context=cmake.get("context", "standalone"),
        cmake_default=bool(cmake.get("default", False)),
        check=CheckSpec(check.get("compiler", "gcc"),
                        tuple(folder / str(p) for p in check.get("include") or ()),
                        tuple(check.get("defines") or ())),
        builtin_kind=doc.get("builtin_kind"), simulator=bool(doc.get("simulator", False)),
        simulated_memory=bool(doc.get("simulated_memory", doc.get("simulator", False))),
        kernel_library=KernelLibrary(lib["kind"], lib["generator"]) if lib else None,
        tree=load_tree(doc["tree"], str(path)) if doc.get("tree") else None, folder=folder)


@cache
def all_platforms() -> dict[str, Platform]:
    """Every platform shipped with the tool, by name, sorted."""
    root = platforms_dir()
    return {p.name: p for p in (load_platform(folder) for folder in sorted(
        p for p in root.iterdir() if (p / "platform.yaml").is_file()))}


def platform_by_name(name: str) -> Platform:
    """The platform called ``name``; an unknown name lists the known ones."""
    platforms = all_platforms()
    if name not in platforms:
        raise TvmdevError(f"unknown platform '{name}'",
                          hint="known platforms: " + ", ".join(platforms))
    return platforms[name]
