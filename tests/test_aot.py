"""tvmdev aot: what the executor header and source promise, the plan metadata,
selective build, and byte-identical regeneration."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import REPO, Result, need_tool, run_ok, tree

MLP = REPO / "examples/mlp/mlp.yaml"
CNN = REPO / "examples/cnn/cnn.yaml"


def test_header_has_typed_devices_and_tvm_size_macros(cli: Callable[..., Result],
                                                      tmp_path: Path) -> None:
    assert cli("aot", str(MLP), "-o", str(tmp_path / "out")).code == 0
    h = (tmp_path / "out/tvmgen_mlp.h").read_text()
    assert "tvm_device_woofles_t *npu0;" in h and "tvm_device_woofles_t *npu1;" in h
    assert "void *npu" not in h
    assert "#define TVMGEN_MLP_X_SIZE 256" in h
    assert "#define TVMGEN_MLP_Y_SIZE 40" in h
    assert "#define TVMGEN_MLP_WORKSPACE_SIZE " in h
    assert "int32_t tvmgen_mlp_run(\n    const struct tvmgen_mlp_inputs *inputs,\n" in h
    c = (tmp_path / "out/tvmgen_mlp.c").read_text()
    for banned in ("malloc", "calloc", "realloc", "free("):
        assert banned not in c
    assert "static uint8_t tvmgen_mlp_workspace[" in c


def test_plan_metadata(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli("aot", str(CNN), "-o", str(tmp_path / "out"), "--schedule", "lazy").code == 0
    plan = json.loads((tmp_path / "out/tvmgen_cnn_plan.json").read_text())
    assert plan["schedule"] == "lazy"
    assert [o["name"] for o in plan["operators"]][:3] == ["conv1", "relu1", "pool1"]
    assert plan["operators"][0]["kernels"] == ["tvmk_conv2d_f32"]
    assert plan["arena"]["size"] >= plan["arena"]["lower_bound"] > 0
    ws = (tmp_path / "out/tvmgen_cnn.h").read_text()
    assert f"#define TVMGEN_CNN_WORKSPACE_SIZE {plan['arena']['size']}" in ws
    offsets = {k: v["offset"] for k, v in plan["tensors"].items() if "offset" in v}
    assert set(offsets) == {"c1", "r1", "p1", "c2", "s2", "t2", "p2", "f", "logits"}
    assert ["r1", "c1"] in plan["arena"]["in_place"]


def test_plan_lists_each_operators_scratch(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The gemm operators' scratch: in plan.json, in the arena, and pointed into the
    workspace the run was given (not the static one) by the executor."""
    assert cli("aot", str(MLP), "-o", str(tmp_path / "out")).code == 0
    plan = json.loads((tmp_path / "out/tvmgen_mlp_plan.json").read_text())
    scratch = {o["name"]: o["scratch"] for o in plan["operators"]}
    assert scratch == {"fc1": {"bytes": 5696, "offset": 128}, "act1": None,
                       "fc2": {"bytes": 3008, "offset": 176}, "prob": None}
    assert plan["arena"]["size"] == 128 + 5696 == plan["arena"]["lower_bound"]
    assert plan["arena"]["size_without_scratch"] == 176
    assert plan["tuning"] == {"gemm_mr": 5, "gemm_nr": 16, "gemm_kc": 64,
                              "gemm_scratch_max": 32768}
    c = (tmp_path / "out/tvmgen_mlp.c").read_text()
    assert "    .scratch_bytes = 5696,\n" in c
    assert ("    gemm_params = tvmgen_mlp_params_fc1;\n"
            "    gemm_params.scratch = ws + 128; /* 5696 bytes */\n"
            "    ret = tvmk_gemm_f32(\n        inputs->x,\n        tvmgen_mlp_const_w1.values,\n"
            "        tvmgen_mlp_const_b1,\n        t_h1,\n        &gemm_params,\n"
            "        devices->npu0);\n") in c
    relu = "ret = tvmk_relu_f32(t_h1, t_a1, &tvmgen_mlp_params_act1, NULL);"
    assert relu in c


def test_selective_build_copies_only_selected_kernels(cli: Callable[..., Result],
                                                      tmp_path: Path) -> None:
    assert cli("aot", str(MLP), "-o", str(tmp_path / "out")).code == 0
    copied = sorted(p.name for p in (tmp_path / "out/kernels/portable").glob("*.c"))
    assert copied == ["gemm.c", "relu.c", "softmax.c"]


def test_regeneration_is_identical(cli: Callable[..., Result], tmp_path: Path) -> None:
    cli("aot", str(CNN), "-o", "out", cwd=tmp_path)
    before = tree(tmp_path / "out")
    r = cli("aot", str(CNN), "-o", "out", cwd=tmp_path)
    said = ("unchanged", "arena", "note", "kernels", "RAM: ", "flash: ", "    ")
    assert all(line.startswith(said) for line in r.out.splitlines()), r.out
    assert tree(tmp_path / "out") == before


def test_aot_output_compiles_standalone(cli: Callable[..., Result], tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    cli("new-device", "woofles", "--platform", "posix", "-o", str(tmp_path / "dev"))
    cli("aot", str(CNN), "-o", str(tmp_path / "out"))
    out = tmp_path / "out"
    srcs = [str(out / "tvmgen_cnn.c"), *map(str, (out / "kernels/portable").glob("*.c"))]
    run_ok([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
            f"-I{out}", f"-I{out}/kernels/portable", f"-I{tmp_path}/dev/include", *srcs],
           cwd=tmp_path)
