"""Names in C: the one spelling function, the registry of every generated identifier and
macro (mangled tensors and operators, refused devices, kinds and models, with both
sources named), the escapes of string literals and comments, and the list of the
headers' macros checked against the real headers."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool, run_ok, tree

from tvmdev.naming import c_spelling, reserved
from tvmdev.render.cvalues import c_comment, c_float, c_string


@pytest.mark.parametrize("name,spelling", [
    ("x", "x"), ("serving_default_input_1:0", "serving_default_input_1_0"),
    ("StatefulPartitionedCall/model/conv2d/BiasAdd",
     "StatefulPartitionedCall_model_conv2d_BiasAdd"),
    ("model/dense/MatMul;model/dense/bias", "model_dense_MatMul_model_dense_bias"),
    ("1x", "t_1x"), ("0", "t_0"), ("_x", "x"), ("__x", "x"), ("x_", "x_"), ("x:", "x"),
    ("naïve", "naive"), ("中文", "u4e2d_u6587"), ("🙂", "t"), ("", "t"),
    ("int", "int_"), ("class", "class_"), ("EOF", "EOF_"), ("INT32_MAX", "INT32_MAX_"),
    ("TVM_DEVICE_OK", "TVM_DEVICE_OK_"), ("stdin", "stdin_"), ("linux", "linux_"),
    ("a\"b*/%s??/\n", "a_b_s"), ("n" * 300, "n" * 54 + "_230b0774"),
])
def test_c_spelling(name: str, spelling: str) -> None:
    assert c_spelling(name) == spelling
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,62}", spelling) and not reserved(spelling)


MODEL = """\
name: m
devices:
  npu0: {kind: woofles}
inputs:
  serving_default_input_1:0: {shape: [1, 4], dtype: float32}
  EOF: {shape: [1, 4], dtype: float32}
outputs:
  "y%s\\"*/": {shape: [1, 4], dtype: float32}
constants:
  w: {shape: [4, 4], dtype: float32, random: {seed: 1, low: -1, high: 1}}
  unread: {shape: [2], dtype: float32, values: [1, 2]}
operators:
  - {name: StatefulPartitionedCall/model/dense/MatMul, op: gemm,
     inputs: [serving_default_input_1:0, w], outputs: [h.1], device: npu0}
  - {name: "??/\\n*/", op: add, inputs: [h.1, EOF], outputs: [h_1]}
  - {name: h_1, op: relu, inputs: [h_1], outputs: ["y%s\\"*/"]}
"""


def test_importer_and_hostile_names_become_readable_unique_identifiers(
        cli: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(MODEL)
    r = cli("aot", "m.yaml", "-o", "out", cwd=tmp_path)
    assert r.code == 0, r.err
    h = (tmp_path / "out/tvmgen_m.h").read_text()
    assert "const float *serving_default_input_1_0; /* [1, 4] */" in h
    assert "const float *EOF_; /* [1, 4] */" in h
    assert "float *y_s; /* [1, 4] */" in h
    assert "/* output y%s\"* /: float[1, 4] */\n#define TVMGEN_M_Y_S_SIZE 16\n" in h
    c = (tmp_path / "out/tvmgen_m.c").read_text()
    # h.1 and h_1 are two tensors: the second spelling is mangled, not refused.
    assert "float *const t_h_1 = " in c and "float *const t_h_1_2 = " in c
    assert 'TVMGEN_M_TRACE(1, "\\?\\?/\\n*/", ' in c
    assert "/* 1: ?\\?/\\u000a* / (add) -> [1, 4] */" in c
    assert "tvmgen_m_params_StatefulPartitionedCall_model_dense_MatMul = {" in c
    assert "unread" not in c  # no operator reads it: not emitted
    plan = json.loads((tmp_path / "out/tvmgen_m_plan.json").read_text())
    assert plan["tensors"]["EOF"]["c_name"] == "EOF_"
    assert plan["tensors"]["h_1"]["c_name"] == "h_1_2" and "c_name" not in plan["tensors"]["w"]
    assert plan["tensors"]["unread"]["unread"] is True
    assert plan["operators"][1]["c_name"] == "t"


@pytest.mark.parametrize("change,message", [
    (("npu0: {kind: woofles}", "EOF: {kind: woofles}"),
     "m.yaml:3: device 'EOF' gives EOF in C, which is a macro of the C, POSIX or CMSIS "
     "headers"),
    (("npu0: {kind: woofles}", "t: {kind: woofles}"),
     "m.yaml:3: device 't' gives dev_t in C, which is a type of the C or POSIX headers"),
    (("npu0: {kind: woofles}", "npu0: {kind: woofles}\n  NPU0: {kind: woofles}"),
     "m.yaml:4: device 'NPU0' collides with device 'npu0' once converted to C (both give "
     "TVMGEN_M_DEVICE_NPU0)"),
    (("npu0: {kind: woofles}", "npu0: {kind: acc}\n  npu1: {kind: acc_posix}"),
     "m.yaml:4: device kind 'acc_posix' collides with device kind 'acc' once converted to "
     "C (both give TVM_DEVICE_ACC_POSIX_H_)"),
    (("npu0: {kind: woofles}", "npu0: {kind: x1}\n  npu1: {kind: x_1}"),
     "m.yaml:4: device kind 'x_1' collides with device kind 'x1' once converted to C "
     "(both give TVMDeviceX1Init)"),
    (("npu0: {kind: woofles}", "npu0: {kind: status}"),
     "m.yaml:3: device kind 'status' collides with tvm/device/status.h once converted to "
     "C (both give TVM_DEVICE_STATUS_H_)"),
    (("npu0: {kind: woofles}", "TVMGEN_M_H_: {kind: woofles}"),
     "m.yaml:3: device 'TVMGEN_M_H_' gives TVMGEN_M_H_ in C, which is reserved for "
     "tvmdev's headers (TVM*)"),
    (("name: m", "name: " + "m" * 64),
     "m.yaml:1: model name 'mmmmmmmmmmmmmmmmmmmm...' has 64 characters; at most 63"),
    (("op: add,", "op: add, attrs: {}, device: npu0, x: 1,"),
     "m.yaml:15: unknown key 'x' in operator 1"),
])
def test_names_a_person_chose_are_refused_naming_both(change: tuple[str, str], message: str,
                                                      cli: Callable[..., Result],
                                                      tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(MODEL.replace(*change).replace(", device: npu0}", "}"))
    (tmp_path / "out").mkdir()
    r = cli("aot", "m.yaml", "-o", "out", cwd=tmp_path)
    assert (r.code, r.err.splitlines()[0]) == (1, f"tvmdev: {message}")
    assert len(r.err.splitlines()) <= 2 and tree(tmp_path / "out") == {}


def test_a_tensor_that_would_clash_with_a_device_bit_is_mangled(
        cli: Callable[..., Result], tmp_path: Path) -> None:
    """Device x_size gives the enum constant TVMGEN_M_DEVICE_X_SIZE; input device_x would
    give the macro TVMGEN_M_DEVICE_X_SIZE, which would replace it; an input called
    workspace would define TVMGEN_M_WORKSPACE_SIZE twice."""
    text = (MODEL.replace("npu0", "x_size").replace("EOF", "device_x")
            .replace("serving_default_input_1:0", "workspace"))
    (tmp_path / "m.yaml").write_text(text)
    assert cli("aot", "m.yaml", "-o", "out", cwd=tmp_path).code == 0
    h = (tmp_path / "out/tvmgen_m.h").read_text()
    assert "#define TVMGEN_M_DEVICE_X_2_SIZE 16" in h and "*device_x_2;" in h
    assert "#define TVMGEN_M_WORKSPACE_2_SIZE 16" in h
    assert h.count("#define TVMGEN_M_WORKSPACE_SIZE ") == 1


@pytest.mark.parametrize("value,literal", [
    (0.5, "0.5f"), (0.1, "0.100000001f"), (1e-50, "0.0f"), (-1e-50, "-0.0f"),
    (1e-40, "9.9999461e-41f"), (3.4028234e38, "3.40282347e+38f"), (2, "2.0f"),
])
def test_c_float_is_the_float32_value(value: float, literal: str) -> None:
    assert c_float(value) == literal


def test_c_float_refuses_what_float_cannot_hold() -> None:
    for v in (1e39, float("inf"), float("nan"), 10**400):
        with pytest.raises(ValueError):
            c_float(v)


TEXTS = ['a"b', "a\\b", "??/", "??=??(??)", "???/", "%s%n", "x*/y/*", "a\nb\r\tc",
         "é中🙂", "\x00\x01\x7f", "?", "'", "\\", ""]


def test_c_string_and_c_comment_survive_the_compiler(tmp_path: Path) -> None:
    """Every text, as a literal, holds exactly its UTF-8 bytes; as a comment (a block
    comment, one in a #define, and one at the end of a line) it compiles under
    -Werror with trigraphs on, and the code after it is still there."""
    gcc = need_tool("gcc")
    lines = ["#include <stdio.h>", "#include <string.h>"]
    for i, t in enumerate(TEXTS):
        lines += [f"/* {c_comment(t)} */", f"#define TEXT{i} {c_string(t)} /* {c_comment(t)} */",
                  f"static const char text{i}[] = TEXT{i}; /* {c_comment(t)}",
                  " * second line */"]
    lines += ["int main(void)", "{"]
    lines.append("    size_t i;")
    for i in range(len(TEXTS)):
        lines.append(f'    for (i = 0; i + 1 < sizeof(text{i}); i++) printf("%02x", '
                     f'(unsigned)(unsigned char)text{i}[i]);')
        lines.append('    putchar(10);')
    lines += ["    return 0;", "}"]
    (tmp_path / "t.c").write_text("\n".join(lines) + "\n")
    run_ok([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wtrigraphs",
            "-Wcomment", str(tmp_path / "t.c"), "-o", str(tmp_path / "t")])
    out = subprocess.run([str(tmp_path / "t")], capture_output=True, check=True, text=True)
    assert out.stdout.splitlines() == [t.encode().hex() for t in TEXTS]
    assert all("\n" not in c_comment(t) and "*/" not in c_comment(t) for t in TEXTS)


_QUOTED = re.compile(r'"[^"\n]*?\{\{(.*?)\}\}[^"\n]*?"')
_COMMENTED = re.compile(r"/\*(?:(?!\*/).)*?\{\{(.*?)\}\}", re.S)
# What the executor and harness templates may print bare inside quotes or comments:
# C identifiers checked by the loaders (and numbers, shapes, the board's name).
IDENTIFIERS = {"prefix", "macro", "model", "kind", "k.kind", "k.platform", "d.name",
               "d.camel", "d.dashed", "h", "schedule", "board", "console_uart", "guard",
               "alignment", "t.shape", "t.ctype", "c.shape", "q.shape", "q.block", "q.n",
               "q.k", "op.op", "op.device", "s.op.index", "s.op.op", "s.op.device",
               "s.op.out_shape", "s.op.scratch.bytes", "atol", "rtol", "t.cname"}


def test_templates_put_user_text_through_the_escapes() -> None:
    """Every {{ }} inside a string literal or a comment of the executor and harness
    templates is escaped (|c_string, |c_comment) or a value known to be an identifier."""
    bare = []
    for path in sorted([*REPO.glob("templates/executor.*.j2"),
                        *REPO.glob("templates/harness/**/*.j2")]):
        text = path.read_text()
        for m in [*_QUOTED.finditer(text), *_COMMENTED.finditer(text)]:
            for expr in re.findall(r"\{\{(.*?)\}\}", m.group(0)):
                expr = expr.strip()
                if not expr.endswith(("|c_string", "|c_comment")) and expr not in IDENTIFIERS:
                    bare.append(f"{path.relative_to(REPO)}: {{{{ {expr} }}}}")
    assert bare == []


_HEADERS = ["assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646",
            "limits", "locale", "math", "setjmp", "signal", "stdarg", "stdbool", "stddef",
            "stdint", "stdio", "stdlib", "string", "tgmath", "time", "wchar", "wctype"]


def _object_macros(compiler: str, source: str, *flags: str) -> set[str]:
    proc = subprocess.run([compiler, "-std=c99", *flags, "-E", "-dM", "-x", "c", "-"],
                          input=source, capture_output=True, text=True, check=True)
    return {m for m in re.findall(r"^#define ([A-Za-z]\w*) ", proc.stdout, re.M)}


@pytest.mark.parametrize("compiler,extra", [("gcc", ["pthread"]), ("arm-none-eabi-gcc", [])])
def test_every_macro_of_the_headers_is_reserved(compiler: str, extra: list[str],
                                                tmp_path: Path) -> None:
    """Object-like macros of the C library (glibc with POSIX, and newlib), of the CMSIS
    headers, of the portable kernels and of the generated status header: a tensor spelled
    like one is mangled, a device refused."""
    cc = need_tool(compiler)
    source = "#define _POSIX_C_SOURCE 200809L\n" + "".join(
        f"#include <{h}.h>\n" for h in [*_HEADERS, *extra])
    found = _object_macros(cc, source)
    cmsis = REPO / "platforms/cmsis/include"
    found |= _object_macros(cc, "".join(f'#include "{p.name}"\n' for p in
                                        sorted(cmsis.glob("*.h"))), f"-I{cmsis}")
    found |= set(re.findall(r"#define ([A-Za-z]\w*)",
                            (REPO / "runtime/kernels/portable/tvmk_portable.h").read_text()))
    found |= set(re.findall(r"\n#define ([A-Za-z]\w*)", (
        REPO / "tests/goldens/cmsis_posix/include/tvm/device/status.h").read_text()))
    assert sorted(m for m in found if not reserved(m)) == []


def test_c_name_gives_the_spelling_and_a_bad_one_is_one_line(cli: Callable[..., Result],
                                                              tmp_path: Path) -> None:
    text = MODEL.replace(", device: npu0}", "}")
    model = tmp_path / "m.yaml"
    model.write_text(text.replace("op: gemm,", "op: gemm, c_name: dense_1,", 1))
    r = cli("aot", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 0, r.err
    c = (tmp_path / "o/tvmgen_m.c").read_text()
    assert "tvmgen_m_params_dense_1 = {" in c
    assert "/* StatefulPartitionedCall/model/dense/MatMul: gemm */" in c  # its name, kept
    model.write_text(text.replace("op: gemm,", "op: gemm, c_name: 1dense,", 1))
    r = cli("aot", str(model), "-o", str(tmp_path / "bad"))
    line = next(i for i, t in enumerate(model.read_text().splitlines(), 1) if "1dense" in t)
    assert r.code == 1 and r.err.startswith(f"tvmdev: {model}:{line}: c_name of "), r.err
    assert "starts with a digit" in r.err and not (tmp_path / "bad").exists()
