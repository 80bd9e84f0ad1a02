"""The Zephyr build's devicetree against a board file's memory map (tvmdev/load/devicetree.py):
the memories ``chosen`` names, read from zephyr.dts as dtc prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvmdev.errors import TvmdevError
from tvmdev.load.board import board_by_name
from tvmdev.load.devicetree import check_memory, chosen_memories

# The shape of build/zephyr/zephyr/zephyr.dts for qemu_cortex_m3: Zephyr's
# boards/arm/qemu_cortex_m3/qemu_cortex_m3.dts (chosen) over dts/arm/ti/lm3s6965.dtsi
# (sram0 64 KiB, flash0 256 KiB under the flash controller), cells as dtc writes them.
LM3S6965_DTS = """/dts-v1/;

/ {
\t#address-cells = < 0x1 >;
\tchosen {
\t\tzephyr,sram = &sram0;
\t\tzephyr,flash = &flash0;
\t\tzephyr,console = &uart0;
\t};
\tsram0: memory@20000000 {
\t\tcompatible = "mmio-sram";
\t\treg = < 0x20000000 0x10000 >;
\t};
\tsoc {
\t\tflash-controller@400fd000 {
\t\t\tcompatible = "ti,stellaris-flash-controller";
\t\t\treg = < 0x400fd000 0x1000 >;
\t\t\tflash0: flash@0 {
\t\t\t\tcompatible = "soc-nv-flash";
\t\t\t\treg = < 0x0 0x40000 >;
\t\t\t\tpartitions {
\t\t\t\t\treg = < 0x0 0x10 >;
\t\t\t\t};
\t\t\t};
\t\t};
\t};
};
"""


def test_chosen_memories(tmp_path: Path) -> None:
    dts = tmp_path / "zephyr.dts"
    dts.write_text(LM3S6965_DTS)
    assert chosen_memories(dts) == {"flash": (0, 0x40000), "sram": (0x20000000, 0x10000)}


def test_qemu_cortex_m3_board_file_matches_its_devicetree(tmp_path: Path) -> None:
    dts = tmp_path / "zephyr.dts"
    dts.write_text(LM3S6965_DTS)
    mem = board_by_name("qemu_cortex_m3").memory
    assert mem is not None
    check_memory(dts, "qemu_cortex_m3", (mem.code.origin, mem.code.length),
                 (mem.ram.origin, mem.ram.length), "qemu_cortex_m3.yaml")


def test_a_board_file_claiming_more_ram_than_the_devicetree_is_refused(tmp_path: Path) -> None:
    dts = tmp_path / "zephyr.dts"
    dts.write_text(LM3S6965_DTS)
    with pytest.raises(TvmdevError) as exc:
        check_memory(dts, "b", (0, 0x40000), (0x20000000, 0x20000), "b.yaml")
    assert ("memory.ram (131,072 bytes at 0x20000000) is not inside Zephyr's chosen "
            "zephyr,sram (65,536 bytes at 0x20000000" in str(exc.value))
