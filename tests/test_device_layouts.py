"""A device kind's constants in its own layout (issue 23; tvmdev/load/device_layouts.py,
tvmdev/plan/device_layouts.py): ``kernels/<kind>_layouts.yaml`` of a new-device folder.

The steps are checked against numpy's own transpose and pad; the end-to-end run uses a
gemm kernel written here the way a device's would be: it reads its B from the device's
memory as N x K', K' padded to a multiple of 48, which only the layout gives it. The run
compares with the reference evaluation of the model (numpy), and without the layout the
same kernel reads the wrong bytes and the run fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_tool

from tvmdev.errors import TvmdevError, Where
from tvmdev.load.device_layouts import Layout, LayoutStep, load_layouts
from tvmdev.plan.device_layouts import apply_layout

MLP = REPO / "examples/mlp/mlp.yaml"
LAYOUT = """layouts:
  gemm:
    B: [{permute: [1, 0]}, {pad: {axis: 1, multiple: 48}}]
"""
# The device's gemm: Y = alpha * A B + beta * C, B stored N x KP (the layout above).
KERNEL = r"""
#include <string.h>
#include "tvm/kernels/woofles.h"
#include "tvm/device/woofles/posix.h"

static float at(const uint8_t *mem, tvm_device_woofles_addr_t base, int32_t i)
{
    float v;
    memcpy(&v, mem + base + 4u * (uint32_t)i, sizeof v);
    return v;
}

int32_t woofles_gemm_f32(tvm_device_woofles_addr_t A, tvm_device_woofles_addr_t B,
                         tvm_device_woofles_addr_t C, tvm_device_woofles_addr_t Y,
                         const struct tvmk_gemm_params *p, void *resource_handle,
                         tvm_device_woofles_addr_t scratch)
{
    tvm_device_woofles_t *dev = resource_handle;
    uint8_t *mem = dev->user.memory;
    const int32_t kp = (p->K + 47) / 48 * 48;
    (void)scratch;
    if (p->trans_a || p->trans_b) {
        return TVM_DEVICE_ERR_UNSUPPORTED;
    }
    for (int32_t m = 0; m < p->M; ++m) {
        for (int32_t n = 0; n < p->N; ++n) {
            float acc = 0.0f, y;
            for (int32_t k = 0; k < p->K; ++k) {
                acc += at(mem, A, m * p->K + k) * at(mem, B, n * kp + k);
            }
            y = p->alpha * acc;
            if (C != TVM_DEVICE_WOOFLES_ADDR_NONE) {
                y += p->beta * at(mem, C, m * p->c_stride_m + n * p->c_stride_n);
            }
            memcpy(mem + Y + 4u * (uint32_t)(m * p->N + n), &y, sizeof y);
        }
    }
    return TVM_DEVICE_OK;
}
"""


def _layout(*steps: LayoutStep) -> Layout:
    return Layout("woofles", "gemm", "B", steps, Where("l.yaml", 3))


def test_steps_are_numpys_transpose_and_pad() -> None:
    w = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    got = apply_layout(w, _layout(LayoutStep("permute", (2, 0, 1)),
                                  LayoutStep("pad", (0, 4))), "w")
    want = np.pad(np.transpose(w, (2, 0, 1)), ((0, 3), (0, 0), (0, 0)))
    assert got.shape == (8, 2, 3) and np.array_equal(got, want) and got.flags.c_contiguous
    # Already a multiple: unchanged.
    assert np.array_equal(apply_layout(w, _layout(LayoutStep("pad", (2, 5))), "w"), w)


@pytest.mark.parametrize("step,says", [
    (LayoutStep("permute", (0, 0)), "permute [0, 0] is not an order of the 2 axes"),
    (LayoutStep("permute", (1, 0, 2)), "permute [1, 0, 2] is not an order of the 2 axes"),
    (LayoutStep("pad", (2, 8)), "pad axis 2 of constant 'w' [4, 6], which has 2 axes"),
])
def test_a_step_that_does_not_fit_is_refused_at_its_line(step: LayoutStep, says: str) -> None:
    with pytest.raises(TvmdevError) as e:
        apply_layout(np.zeros((4, 6), np.float32), _layout(step), "w")
    assert says in str(e.value) and "l.yaml:3" in str(e.value)


@pytest.mark.parametrize("text,says", [
    ("layouts:\n  gemmm:\n    B: [{permute: [1, 0]}]\n", ":2: layouts: no operator 'gemmm'"),
    ("layouts:\n  gemm:\n    W: [{permute: [1, 0]}]\n", ":2: layouts: gemm has no input 'W'"),
    ("layouts:\n  gemm:\n    B: [{transpose: [1, 0]}]\n", ":3:"),
    ("layouts:\n  gemm:\n    B: [{pad: {axis: 0, multiple: 0}}]\n", ":3:"),
])
def test_a_bad_layouts_file_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels/woofles_layouts.yaml").write_text(text)
    with pytest.raises(TvmdevError) as e:
        load_layouts(tmp_path, ["woofles"])
    assert says in str(e.value), str(e.value)


def _folder(tmp: Path, cli: Callable[..., Result], layout: str | None) -> Path:
    assert cli("new-device", "woofles", "--platform", "posix", "--memory", "65536:16",
               "--ops", "gemm", "-o", "dev", cwd=tmp).code == 0
    dev = tmp / "dev"
    assert "layouts: {}" in (dev / "kernels/woofles_layouts.yaml").read_text()
    if layout is not None:
        (dev / "kernels/woofles_layouts.yaml").write_text(layout)
    (dev / "src/kernels/woofles/gemm.c").write_text(KERNEL)
    return dev


@pytest.mark.slow  # builds and runs the model on the host
def test_a_kernel_reads_its_constants_in_its_layout(tmp_path: Path,
                                                    cli: Callable[..., Result]) -> None:
    need_tool("gcc", "apt-get install gcc")
    dev = _folder(tmp_path, cli, LAYOUT)
    r = cli("run", str(MLP), "--device-dir", str(dev), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    plan = json.loads((tmp_path / "b/model/tvmgen_mlp_plan.json").read_text())
    layouts = {p["device"]: p["constants"].get("layouts") for p in plan["pools"]}
    steps = "permute [1, 0], pad axis 1 to a multiple of 48"
    assert layouts == {"npu0": {"w1": steps}, "npu1": {"w2": steps}}, layouts
    # w1 [64, 32] -> [32, 96]: 12,288 bytes in npu0's memory, which the load sends.
    (p0,) = [p for p in plan["pools"] if p["device"] == "npu0"]
    assert p0["constants"]["tensors"][0] == "w1"
    assert p0["constants"]["size"] == 12288 + 128  # w1 laid out, b1 as it is
    code = (tmp_path / "b/model/tvmgen_mlp.c").read_text()
    assert ("/* in the device's layout: permute [1, 0], pad axis 1 to a multiple of 48 */\n"
            "/* w1: [32, 96], as exact float32 bit patterns */") in code
    assert re.search(r"CopyTo\(dev, \d+U, tvmgen_mlp_const_w1\.values, 12288U\)", code)


@pytest.mark.slow  # builds and runs the model on the host
def test_without_the_layout_the_same_kernel_fails(tmp_path: Path,
                                                  cli: Callable[..., Result]) -> None:
    """The check above can fail: the kernel reads bytes only the layout puts there."""
    need_tool("gcc", "apt-get install gcc")
    dev = _folder(tmp_path, cli, None)
    r = cli("run", str(MLP), "--device-dir", str(dev), "--build-dir", str(tmp_path / "b"))
    assert r.code != 0 and "PASS" not in r.out, r.out


def test_a_constant_the_cpu_reads_too_is_refused(tmp_path: Path,
                                                 cli: Callable[..., Result]) -> None:
    dev = _folder(tmp_path, cli, LAYOUT)
    model = tmp_path / "m.yaml"
    text = MLP.read_text().replace("npy: w1.npy", f"npy: {REPO}/examples/mlp/w1.npy")
    text = text.replace("operators:\n", "operators:\n  - {name: cpu_fc, op: gemm, inputs: "
                        "[x, w1], outputs: [z]}\n")
    model.write_text(text.replace("outputs:\n  y:", "outputs:\n  z: {shape: [1, 32], "
                                  "dtype: float32}\n  y:"))
    r = cli("aot", str(model), "--device-dir", str(dev), "-o", str(tmp_path / "out"))
    assert r.code == 1 and not (tmp_path / "out").exists(), r.out + r.err
    assert r.err.splitlines()[0] == (
        f"tvmdev: {dev}/kernels/woofles_layouts.yaml:3: layouts: constant 'w1' (gemm B of "
        "'fc1') is also read by 'cpu_fc' on the CPU, which needs it as the model gives it"), r.err
