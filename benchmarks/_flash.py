"""Flash of a firmware, counted the same way for tvmdev's, the TFLM peer's and
TinyEngine's (cmsis_nn_bench.py's flash columns).

``elf_flash(elf, input_symbols)``: the bytes the ELF loads (every allocated section with
contents: text, rodata, exidx, init_array, the load image of data) less the input
array(s) the firmware copies into the model (tvmdev's harness's ``in_*``, the TFLM
peer's ``tflm_peer_input``, TinyEngine's ``te_peer_input``). So it holds the code, the
constants (tvmdev's weights and per-layer params; TFLM's whole .tflite flatbuffer;
TinyEngine's generated weight arrays) and what all three link alike: tvmdev's startup,
semihosting exit, console UART and counter, and newlib-nano's and libgcc's functions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile


def elf_flash(elf: Path, is_input: Callable[[str], bool]) -> int:
    """Loaded bytes of ``elf`` less the objects whose names ``is_input`` accepts."""
    with Path(elf).open("rb") as f:
        e = ELFFile(f)
        total = sum(int(s["sh_size"]) for s in e.iter_sections()
                    if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s["sh_type"] != "SHT_NOBITS")
        symtab = e.get_section_by_name(".symtab")
        assert symtab is not None, f"{elf} has no symbol table"
        inputs = sum(int(s["st_size"]) for s in symtab.iter_symbols()  # type: ignore[attr-defined]
                     if s["st_info"]["type"] == "STT_OBJECT" and is_input(s.name))
    return total - inputs
