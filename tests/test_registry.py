"""The kernel registry: ExecuTorch-style YAML, precedence, resolution, run-time fallback."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool, tree

from tvmdev.errors import TvmdevError
from tvmdev.load.library import load_library
from tvmdev.load.model import load_model
from tvmdev.model.scratch import Tuning, gemm_pack
from tvmdev.plan.kernels import build_registry, operator_scratch, resolve
from tvmdev.plan.memory import plan_memory

MLP = REPO / "examples/mlp/mlp.yaml"

USER_LIB = """\
- op: gemm
  header: my_kernels.h
  type_alias:
    T0: [float32]
  kernels:
    - arg_meta: {A: [T0], B: [T0], Y: [T0]}
      kernel_name: my_gemm_nobias
      sources: [my_gemm.c]
      args: [Y, A, B, C, params, resource_handle]
    - arg_meta: null
      kernel_name: my_gemm_any
      sources: [my_gemm.c]
"""

# A user gemm that serves only calls with K % 8 == 0 (declining the rest, like a kernel
# with a tile constraint) and otherwise computes through the portable kernel; it counts
# its calls so the test can see which kernel served.
USER_C = """\
#include "my_kernels.h"
int my_gemm_calls;
int32_t my_gemm_nobias(float *Y, const float *A, const float *B, const float *C,
                       const struct tvmk_gemm_params *params, void *resource_handle)
{
    if (params->K % 8 != 0) {
        return TVM_DEVICE_DECLINED;
    }
    my_gemm_calls++;
    return tvmk_gemm_f32(A, B, C, Y, params, resource_handle);
}
int32_t my_gemm_any(const float *A, const float *B, const float *C, float *Y,
                    const struct tvmk_gemm_params *params, void *resource_handle)
{
    (void)A; (void)B; (void)C; (void)Y; (void)params; (void)resource_handle;
    return TVM_DEVICE_DECLINED;
}
"""

USER_H = """\
#include "tvmk_portable.h"
int32_t my_gemm_nobias(float *Y, const float *A, const float *B, const float *C,
                       const struct tvmk_gemm_params *params, void *resource_handle);
int32_t my_gemm_any(const float *A, const float *B, const float *C, float *Y,
                    const struct tvmk_gemm_params *params, void *resource_handle);
"""


def _user_lib(tmp: Path) -> Path:
    (tmp / "my_kernels.yaml").write_text(USER_LIB)
    (tmp / "my_gemm.c").write_text(USER_C)
    (tmp / "my_kernels.h").write_text(USER_H)
    return tmp / "my_kernels.yaml"


@pytest.mark.slow
def test_precedence_user_then_device_then_portable(cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    cli("new-device", "woofles", "--platform", "posix", "-o", str(tmp_path / "dev"))
    dev_lib = load_library(tmp_path / "dev/kernels/woofles.yaml", "device", "woofles",
                           "woofles", tmp_path / "dev/include")
    reg = build_registry([_user_lib(tmp_path)], [dev_lib])
    m = load_model(MLP)
    chains = {m.operators[i].name: [k.name for k in c] for i, c in resolve(m, reg).items()}
    # fc1 has a bias (C): the user's specific kernel does not match, its catch-all does.
    assert chains["fc1"] == ["my_gemm_any", "woofles_gemm_f32", "tvmk_gemm_f32"]
    assert chains["fc2"] == ["my_gemm_nobias", "my_gemm_any", "woofles_gemm_f32",
                             "tvmk_gemm_f32"]
    assert chains["act1"] == ["tvmk_relu_f32"]


@pytest.mark.slow
def test_runtime_fallback_gives_the_same_result(cli: Callable[..., Result],
                                                tmp_path: Path) -> None:
    need_tool("gcc")
    lib = _user_lib(tmp_path)
    r = cli("run", str(MLP), "--kernels", str(lib), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    src = (tmp_path / "b/model/tvmgen_mlp.c").read_text()
    src = re.sub(r"\(\n +", "(", re.sub(r",\n +", ", ", src))  # calls on one line each
    # fc2 (K = 32) is served by my_gemm_nobias, called with its own argument order.
    assert "ret = my_gemm_nobias(t_h2, t_a1, tvmgen_mlp_const_w2.values, NULL," in src
    assert "if (ret == TVM_DEVICE_DECLINED) {\n        ret = my_gemm_any(" in src
    # A model whose gemm has K = 12: my_gemm_nobias declines, the chain still matches.
    text = MLP.read_text().replace("[32, 10]", "[12, 10]").replace("[64, 32]", "[64, 12]")
    text = text.replace("shape: [32], dtype: float32, values: [", "shape: [12], dtype: "
                        "float32, values: [").replace("w1.npy", str(MLP.parent / "w1.npy"))
    vals = ", ".join(["0.1"] * 12)
    text = re.sub(r"values: \[[^\]]*\]", f"values: [{vals}]", text)
    text = text.replace(f"npy: {MLP.parent / 'w1.npy'}",
                        "random: {seed: 3, low: -1, high: 1}")
    (tmp_path / "k12.yaml").write_text(text)
    r = cli("run", str(tmp_path / "k12.yaml"), "--kernels", str(lib), "--build-dir",
            str(tmp_path / "b12"))
    assert r.code == 0, r.out + r.err


def test_missing_kernel_lists_what_exists(tmp_path: Path) -> None:
    lib = tmp_path / "only.yaml"
    lib.write_text("- op: gemm\n  header: h.h\n  kernels:\n"
                   "    - {arg_meta: {A: [q4c32], B: [float32], Y: [float32]}, "
                   "kernel_name: special_gemm}\n")
    reg = build_registry([lib], [])
    reg = type(reg)(reg.user, reg.device, type(reg.portable)(
        "portable", "portable", None, reg.portable.path,
        tuple(k for k in reg.portable.kernels if k.op != "gemm")))
    with pytest.raises(TvmdevError) as exc:
        resolve(load_model(MLP), reg)
    assert exc.value.message == ("no kernel for operator 'fc1' (gemm with A=float32, "
                                 "B=float32, C=float32, Y=float32)")
    assert exc.value.hint == ("kernels for gemm: special_gemm (" + str(lib)
                              + ": A=q4c32, B=float32, Y=float32)")


BAD_LIBS = [
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: g, "
     "inline: true}\n", "lib.yaml:4: unknown key 'inline'"),
    ("- op: gemm\n  header: h.h\n  flavour: fast\n  kernels:\n"
     "    - {arg_meta: null, kernel_name: g}\n", "lib.yaml:3: unknown key 'flavour'"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - arg_meta: {A: [T1]}\n"
     "      kernel_name: g\n", "lib.yaml:4: type alias 'T1' is used but not defined"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: 2fast}\n",
     "lib.yaml:4: kernel_name '2fast' starts with a digit"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: my-gemm}\n",
     "lib.yaml:4: kernel_name 'my-gemm' is not a valid C identifier"),
    ("- op: gemm\n  header: h.h\n  header: g.h\n  kernels: []\n",
     "lib.yaml:3: duplicate key 'header' (first defined at line 2)"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: a}\n"
     "- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: b}\n",
     "lib.yaml:5: op 'gemm' has two entries (the first at line 1)"),
    ("- op: selu\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: g}\n",
     "lib.yaml:1: unknown op 'selu'"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: {Z: [float32]}, "
     "kernel_name: g}\n", "lib.yaml:4: 'Z' is not an argument of gemm"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: {A: [float32], Y: [float32]}, "
     "kernel_name: g}\n", "lib.yaml:4: arg_meta of 'g' leaves B of gemm untyped: no call of "
     "gemm matches it"),
    ("- op: relu\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: r, "
     "scratch: 64}\n", "lib.yaml:4: relu kernels get no scratch: struct tvmk_unary_params "
     "has no scratch fields"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: g, "
     "scratch: -1}\n", "lib.yaml:4: scratch must be a number of bytes or a rule for gemm, "
     "got -1"),
    ("- op: gemm\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: g,\n"
     "       scratch: im2col}\n", "lib.yaml:5: scratch must be a number of bytes or a rule "
     "for gemm, got 'im2col'"),
    ("- op: relu\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: r,\n"
     "       inplace: [Y]}\n", "lib.yaml:5: inplace of r must list inputs of relu, each once"),
    ("- op: add\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: a,\n"
     "       inplace: [A, A]}\n", "lib.yaml:5: inplace of a must list inputs of add, each once"),
    ("- op: relu\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: r,\n"
     "       inplace: X}\n", "lib.yaml:5: inplace of r must list inputs of relu, each once"),
    ("- op: depthwise_conv2d\n  header: h.h\n  kernels:\n    - {arg_meta: null, "
     "kernel_name: d,\n       inplace_keep: depthwise_rows}\n", "lib.yaml:5: inplace_keep of "
     "d must be a scratch rule for depthwise_conv2d or buffer, beside inplace"),
    ("- op: depthwise_conv2d\n  header: h.h\n  kernels:\n    - {arg_meta: null, "
     "kernel_name: d, inplace: [input],\n       inplace_keep: rows}\n", "lib.yaml:5: "
     "inplace_keep of d must be a scratch rule for depthwise_conv2d or buffer, beside inplace"),
    ("- op: relu\n  header: h.h\n  kernels:\n    - {arg_meta: null, kernel_name: r, "
     "inplace: [X],\n       inplace_keep: buffer}\n", "lib.yaml:5: inplace_keep of r must "
     "be a scratch rule for relu or buffer, beside inplace"),
]


@pytest.mark.parametrize("text,message", BAD_LIBS, ids=[m.split(": ", 1)[1] for _, m in BAD_LIBS])
def test_bad_library(text: str, message: str, cli: Callable[..., Result],
                     tmp_path: Path) -> None:
    (tmp_path / "lib.yaml").write_text(text)
    (tmp_path / "out").mkdir()
    before = tree(tmp_path)
    r = cli("aot", str(MLP), "-o", "out", "--kernels", "lib.yaml", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == f"tvmdev: {message}"
    assert "Traceback" not in r.err
    assert tree(tmp_path) == before


def test_operator_scratch_is_the_most_its_chain_needs(tmp_path: Path) -> None:
    """A kernel that declares scratch adds its need to the chain's; one that declares none
    takes nothing away from the portable kernel it may decline to."""
    m = load_model(MLP)
    tuning = Tuning()
    portable = operator_scratch(m, resolve(m, build_registry([], [])), tuning)
    assert portable == {0: gemm_pack({"M": 1, "N": 32, "K": 64}, tuning),
                        2: gemm_pack({"M": 1, "N": 10, "K": 32}, tuning)}
    lib = _user_lib(tmp_path)
    none = operator_scratch(m, resolve(m, build_registry([lib], [])), tuning)
    assert none == portable
    lib.write_text(USER_LIB.replace("kernel_name: my_gemm_nobias\n",
                                    "kernel_name: my_gemm_nobias\n      scratch: 100000\n"))
    big = operator_scratch(m, resolve(m, build_registry([lib], [])), tuning)
    assert big == {0: portable[0], 2: 100000}  # my_gemm_nobias serves fc2 (no bias) only
    plan = plan_memory(m, scratch=big)
    assert plan.scratch[2][1] == 100000 and plan.arena_size >= 100000


def test_list_kernels_merged_table(cli: Callable[..., Result], tmp_path: Path) -> None:
    cli("new-device", "woofles", "--platform", "posix", "-o", str(tmp_path / "dev"))
    lib = _user_lib(tmp_path)
    r = cli("list", "kernels", "--device-dir", str(tmp_path / "dev"), "--kernels", str(lib),
            "--json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    gemm = [(x["kernel"], x["level"]) for x in rows if x["op"] == "gemm"]
    assert gemm == [("my_gemm_nobias", "user"), ("my_gemm_any", "user"),
                    ("woofles_gemm_f32", "device"), ("tvmk_gemm_f32", "portable"),
                    ("tvmk_gemm_q4c32_f32", "portable")]
    r = cli("list", "kernels")
    assert r.out.splitlines()[0].split() == ["op", "kernel", "level", "scope", "dtypes",
                                             "header", "scratch"]
    scratch = [(x["kernel"], x["scratch"]) for x in rows if x["scratch"] != "-"]
    assert scratch == [("tvmk_gemm_f32", "gemm_pack"), ("tvmk_matmul_f32", "gemm_pack"),
                       ("tvmk_svdf_f32", "svdf"), ("tvmk_svdf_s8_s16", "svdf"),
                       ("tvmk_svdf_s8", "svdf"), ("tvmk_lstm_f32", "lstm"),
                       ("tvmk_lstm_s8", "lstm"),
                       ("tvmk_depthwise_pointwise_s8", "dw_row")]
    # 54 ops (resize among them), gemm twice (float32, int4 weights), int8 reshape,
    # flatten, fully_connected, conv2d, depthwise_conv2d, quantize of int8; int8 add, sub,
    # mul, maximum, minimum,
    # sigmoid, tanh, softmax, maxpool2d, avgpool2d, pad, mean, concat, transpose,
    # leaky_relu, hard_swish, log_softmax, resize_nearest, resize_bilinear, strided_slice,
    # transpose_conv2d; svdf's two int8 kernels (int16 and int8 state), lstm's int8 one;
    # raw integers (tvmk_rawint.h): int32 add, mul, maximum, minimum, concat, reshape of
    # int32 and uint32, seven casts, div, strided_slice of int16 (raw and 16x8), int32 and
    # uint32 and the eleven signal ops; int16 (16x8, also raw int16's reshape) add, sub,
    # mul, leaky_relu,
    # reshape, flatten, conv2d, depthwise_conv2d, fully_connected, pad, avgpool2d,
    # maxpool2d, dequantize, softmax of int8 and of int16 into int16, quantize six ways
    # (float32 -> int16, five requantizations), conv2d and fully_connected with an int32
    # bias, transpose, concat, maximum, minimum, transpose_conv2d, sigmoid, tanh, mean,
    # resize_nearest; the fusions' int8 kernels, conv2d_add and depthwise_pointwise
    assert len(r.out.splitlines()) == 1 + 85 + 4 + 1 + 2 + 7 + 1 + 3 + 11 + 32 + 2
