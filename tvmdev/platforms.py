"""The platform registry: one folder per platform under ``platforms/``.

Each folder holds a ``platform.yaml`` describing the platform and a ``templates/``
folder. Adding a platform means adding a folder; nothing here names a platform.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import yamlio
from .errors import TvmdevError
from .resources import platforms_dir

FILE_KINDS = ("owned", "scaffold")


@dataclass(frozen=True)
class OptionChoice:
    """One value of a platform option, with the facts templates need about it."""

    value: str
    facts: tuple[tuple[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.facts)


@dataclass(frozen=True)
class PlatformOption:
    """A command-line option a platform accepts (for example ``--cmsis-driver``)."""

    name: str
    flag: str
    help: str
    kind: str  # "choice" or "flag"
    choices: tuple[OptionChoice, ...]
    default: str | bool

    def choice(self, value: str) -> OptionChoice:
        for c in self.choices:
            if c.value == value:
                return c
        raise KeyError(value)


@dataclass(frozen=True)
class FileRule:
    """A file a platform generates: template, output path pattern and ownership."""

    template: str
    path: str
    kind: str
    when: str | None  # the name of a flag option that must be set, if any
    copy: bool = False  # copied as it is (a source file tvmdev ships), not rendered


@dataclass(frozen=True)
class Platform:
    """A platform as described by ``platforms/<name>/platform.yaml``."""

    name: str
    description: str
    handle_type: str
    handle_name: str
    handle_doc: str
    includes: tuple[str, ...]
    files: tuple[FileRule, ...]
    project_files: tuple[FileRule, ...]
    options: tuple[PlatformOption, ...]
    cmake_context: str  # "zephyr" (a Zephyr module) or "standalone" (a CMake project)
    cmake_default: bool  # built by default in a standalone CMake project
    check_compiler: str  # the preprocessor `tvmdev check` prefers
    check_include: tuple[Path, ...]  # include folders for `tvmdev check`
    check_defines: tuple[str, ...]  # macros for `tvmdev check` ({macro}: TVM_DEVICE_<NAME>)
    builtin_kind: str | None  # the device kind this platform implements itself, if any
    simulator: bool  # its templates can render tvmdev's simulated accelerator
    kernel_library: dict[str, str]  # a kernel library for one kind: {kind, generator}
    external: dict[str, Any]  # a third-party source tree the build can use (env, sources)
    folder: Path

    def option(self, name: str) -> PlatformOption:
        for opt in self.options:
            if opt.name == name:
                return opt
        raise KeyError(name)


_PLATFORM_KEYS = {"name", "description", "handle", "includes", "files", "project_files",
                  "options", "cmake", "check", "builtin_kind", "external", "simulator",
                  "kernel_library"}


def _need(node: Any, key: str, typ: type, ctx: yamlio.LineDict) -> Any:
    if key not in node:
        raise TvmdevError(f"missing key '{key}'", yamlio.where_of(ctx))
    value = node[key]
    if not isinstance(value, typ):
        raise TvmdevError(f"'{key}' must be a {typ.__name__}", yamlio.where_of(node, key))
    return value


def _file_rules(node: Any, where_node: Any, key: str) -> tuple[FileRule, ...]:
    rules = []
    for i, item in enumerate(node or []):
        if not isinstance(item, dict) or not {"template", "path", "kind"} <= set(item):
            raise TvmdevError(f"each entry of '{key}' needs template, path and kind",
                              yamlio.where_of(where_node, i))
        if item["kind"] not in FILE_KINDS:
            raise TvmdevError(f"file kind must be one of {', '.join(FILE_KINDS)}",
                              yamlio.where_of(item, "kind"))
        rules.append(FileRule(str(item["template"]), str(item["path"]), str(item["kind"]),
                              item.get("when"), bool(item.get("copy", False))))
    return tuple(rules)


def _load(folder: Path) -> Platform:
    path = folder / "platform.yaml"
    doc = yamlio.load(path)
    if not isinstance(doc, yamlio.LineDict):
        raise TvmdevError("platform.yaml must be a mapping", str(path))
    unknown = set(doc) - _PLATFORM_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise TvmdevError(f"unknown key '{key}'", doc.where(key),
                          hint="known keys: " + ", ".join(sorted(_PLATFORM_KEYS)))
    name = _need(doc, "name", str, doc)
    if name != folder.name:
        raise TvmdevError(f"platform name '{name}' must match its folder '{folder.name}'",
                          doc.where("name"))
    handle = _need(doc, "handle", dict, doc)
    options = []
    for oname, onode in (doc.get("options") or {}).items():
        kind = "flag" if onode.get("type") == "flag" else "choice"
        choices: list[OptionChoice] = []
        for cvalue, facts in (onode.get("choices") or {}).items():
            choices.append(OptionChoice(str(cvalue), tuple(sorted((facts or {}).items()))))
        default = onode.get("default", False if kind == "flag" else "")
        options.append(PlatformOption(oname, str(onode["flag"]), str(onode.get("help", "")),
                                      kind, tuple(choices), default))
    cmake = doc.get("cmake") or {}
    return Platform(
        name=name,
        description=str(doc.get("description", "")),
        handle_type=str(handle["type"]),
        handle_name=str(handle["name"]),
        handle_doc=str(handle.get("doc", "")),
        includes=tuple(doc.get("includes") or ()),
        files=_file_rules(doc.get("files"), doc.get("files"), "files"),
        project_files=_file_rules(doc.get("project_files"), doc.get("project_files"),
                                  "project_files"),
        options=tuple(options),
        cmake_context=str(cmake.get("context", "standalone")),
        cmake_default=bool(cmake.get("default", False)),
        check_compiler=str((doc.get("check") or {}).get("compiler", "gcc")),
        check_include=tuple(folder / str(p) for p in (doc.get("check") or {}).get("include",
                                                                                  [])),
        check_defines=tuple(str(d) for d in (doc.get("check") or {}).get("defines", [])),
        builtin_kind=doc.get("builtin_kind"),
        simulator=bool(doc.get("simulator", False)),
        kernel_library=dict(doc.get("kernel_library") or {}),
        external=dict(doc.get("external") or {}),
        folder=folder,
    )


@cache
def all_platforms() -> dict[str, Platform]:
    """Every platform shipped with the tool, by name, sorted."""
    root = platforms_dir()
    found = {}
    for folder in sorted(p for p in root.iterdir() if (p / "platform.yaml").is_file()):
        plat = _load(folder)
        found[plat.name] = plat
    return found


def get(name: str) -> Platform:
    """The platform called ``name``; an unknown name lists the known ones."""
    platforms = all_platforms()
    if name not in platforms:
        raise TvmdevError(f"unknown platform '{name}'",
                          hint="known platforms: " + ", ".join(platforms))
    return platforms[name]


def device_source(plat: Platform, name: str) -> str:
    """The path of a device's implementation for ``plat`` (src/device/<name>/...)."""
    for rule in plat.files:
        if rule.path.startswith("src/device/"):
            return rule.path.format(name=name, dashed=name.replace("_", "-"))
    raise AssertionError(f"internal error: platform {plat.name} has no device source")
