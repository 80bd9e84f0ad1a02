"""Reading GNU ld's map file (tvmdev.inspect.linkmap): the functions --gc-sections
removed, and whether a map is the one written with a given ELF. (tests/test_inspect.py
checks a real firmware's map.)"""

from __future__ import annotations

from pathlib import Path

from tvmdev.inspect.device_api import device_api_line, device_states
from tvmdev.inspect.linkmap import belongs_to, link_map_of, map_beside, read_link_map

# The shape of arm-none-eabi-ld's map: a long section name breaks its line.
MAP = """\
Archive member included to satisfy reference by file (symbol)

Discarded input sections

 .text          0x00000000        0x0 obj/00-main.o
 .text.TVMDeviceWooflesDestroy
                0x00000000       0x2c obj/02-cmsis.o
 .text.unlikely.cold_path
                0x00000000        0x8 obj/02-cmsis.o
 .text.tiny     0x00000000        0x4 obj/03-sim.o
 .rodata.TVMDeviceWooflesName
                0x00000000        0x8 obj/02-cmsis.o

Memory Configuration

Name             Origin             Length             Attributes
FLASH            0x00000000         0x00400000         xr

Linker script and memory map

 .text.TVMDeviceWooflesInit
                0x00000650       0x3c obj/02-cmsis.o
                0x00000650                TVMDeviceWooflesInit
                0x20000000                __stack_top = .
 .text.main     0x00000700       0x40 obj/00-main.o
                0x00000700                main
"""


def test_removed_functions_and_placed_symbols(tmp_path: Path) -> None:
    (tmp_path / "fw.map").write_text(MAP)
    (tmp_path / "fw.elf").write_bytes(b"")
    assert map_beside(tmp_path / "fw.elf") == tmp_path / "fw.map"
    assert map_beside(tmp_path / "other.elf") is None
    lm = read_link_map(tmp_path / "fw.map")
    # functions only: not the empty .text, not a .rodata object
    assert lm.removed == {"TVMDeviceWooflesDestroy", "cold_path", "tiny"}
    assert lm.placed == {"TVMDeviceWooflesInit": 0x650, "main": 0x700}


def test_a_map_from_another_link_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "fw.map").write_text(MAP)
    lm = read_link_map(tmp_path / "fw.map")
    assert belongs_to(lm, {"TVMDeviceWooflesInit": 0x650, "main": 0x700, "other": 4})
    assert not belongs_to(lm, {"TVMDeviceWooflesInit": 0x654, "main": 0x700})
    assert not belongs_to(lm, {"unrelated": 0x650})  # nothing in common
    found, note = link_map_of(tmp_path / "fw.elf", {"main": 0x700})
    assert found is not None and note is None
    found, note = link_map_of(tmp_path / "fw.elf", {"main": 0x702})
    assert found is None
    assert note == "fw.map is not this ELF's linker map (its addresses differ): not read"
    assert link_map_of(tmp_path / "none.elf", {}) == (None, None)


def test_device_api_states_and_line() -> None:
    defined = {"TVMDeviceWooflesInit", "TVMDeviceWooflesActivate", "TVMDeviceWooflesOpen",
               "TVMDeviceWooflesClose"}
    states = device_states("woofles", defined, frozenset({"TVMDeviceWooflesDestroy"}),
                           defined | {"TVMDeviceWooflesDeactivate"})
    assert states == {"Init": "defined", "Activate": "defined", "Open": "defined",
                      "Close": "defined", "Deactivate": "referenced only",
                      "Destroy": "removed by the linker"}
    assert device_api_line("woofles", states) == (
        "device API woofles: MISSING Deactivate (referenced only); Destroy removed by the "
        "linker: never called")
    states["Deactivate"] = "defined"
    assert device_api_line("woofles", states) == (
        "device API woofles: all six functions defined (Destroy removed by the linker: "
        "never called)")
