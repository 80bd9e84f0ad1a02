"""The int8 portable kernels (runtime/kernels/portable/*_s8.c, tvmk_s8_ops.h) against
TFLM's interpreter, bit for bit, on the seeded one-op models of tests/s8_op_cases.py
(the same cases tests/test_s8_ops.py holds the numpy reference to).

The kernels are compiled once with the library's strict flags; each operator gets one C
driver that reads every case (the params struct as int32 fields, the int8 inputs, the
output's size) from a file, calls the kernel and writes back status and output.
"""

from __future__ import annotations

import contextlib
import io
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import s8_op_cases as oc
import tflm_ref
from conftest import REPO, need_tool, run_ok
from s8_cases import SOFTMAX, Case, Tensor

from tvmdev.cli import main
from tvmdev.model.ops import scratch_structs
from tvmdev.model.s8 import softmax

pytestmark = pytest.mark.slow

PORTABLE = REPO / "runtime" / "kernels" / "portable"
SOURCES = ["add_s8.c", "mul_s8.c", "avgpool2d_s8.c", "maxpool2d_s8.c", "softmax_s8.c",
           "sigmoid_s8.c", "tanh_s8.c", "pad_s8.c", "mean_s8.c", "concat_s8.c"]
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]
OK, ERR_INVALID = 0, -4
D = 6  # TVMK_MAX_DIMS

_BINARY = [("ndim", 1), ("count", 1), ("shape", D), ("a_strides", D), ("b_strides", D),
           ("a_offset", 1), ("b_offset", 1)]
_UNARY = [("count", 1), ("input_zero_point", 1), ("input_range_radius", 1),
          ("input_multiplier", 1), ("input_left_shift", 1)]
# Each params struct of tvmk_s8_ops.h, field by field (name, number of int32s).
STRUCTS: dict[str, list[tuple[str, int]]] = {
    "tvmk_add_s8_params": _BINARY + [
        ("left_shift", 1), ("a_multiplier", 1), ("a_shift", 1), ("b_multiplier", 1),
        ("b_shift", 1), ("out_multiplier", 1), ("out_shift", 1), ("out_offset", 1),
        ("act_min", 1), ("act_max", 1)],
    "tvmk_mul_s8_params": _BINARY + [("out_multiplier", 1), ("out_shift", 1),
                                     ("out_offset", 1), ("act_min", 1), ("act_max", 1)],
    "tvmk_pool2d_s8_params": [(k, 1) for k in ("N", "H", "W", "C", "KH", "KW", "OH", "OW",
                                               "stride_h", "stride_w", "pad_top", "pad_left",
                                               "act_min", "act_max")],
    "tvmk_softmax_s8_params": [(k, 1) for k in ("outer", "depth", "input_multiplier",
                                                "input_left_shift", "diff_min")],
    "tvmk_sigmoid_s8_params": _UNARY,
    "tvmk_tanh_s8_params": _UNARY,
    "tvmk_pad_s8_params": [("ndim", 1), ("count", 1), ("out_shape", D), ("in_shape", D),
                           ("begin", D), ("value", 1)],
    "tvmk_mean_s8_params": [("ndim", 1), ("count", 1), ("shape", D), ("out_strides", D),
                            ("out_count", 1), ("reduced", 1), ("input_zero_point", 1),
                            ("multiplier", 1), ("shift", 1), ("output_zero_point", 1)],
    "tvmk_concat_s8_params": [("ninputs", 1), ("outer", 1), ("blocks", 16)],
}

# op: (cases, params struct, the call; arr[k] are the inputs, y the output).
OPS: dict[str, tuple[Any, str, str]] = {
    "add": (lambda: oc.binary_cases("add"), "tvmk_add_s8_params",
            "status = tvmk_add_s8(arr[0], arr[1], mode ? arr[0] : y, &p, NULL);"),
    "mul": (lambda: oc.binary_cases("mul"), "tvmk_mul_s8_params",
            "status = tvmk_mul_s8(arr[0], arr[1], mode ? arr[0] : y, &p, NULL);"),
    "avgpool2d": (lambda: oc.pool_cases("avgpool2d"), "tvmk_pool2d_s8_params",
                  "status = tvmk_avgpool2d_s8(arr[0], y, &p, NULL);"),
    "maxpool2d": (lambda: oc.pool_cases("maxpool2d"), "tvmk_pool2d_s8_params",
                  "status = tvmk_maxpool2d_s8(arr[0], y, &p, NULL);"),
    "softmax": (oc.softmax_cases, "tvmk_softmax_s8_params",
                "status = tvmk_softmax_s8(arr[0], y, &p, NULL);"),
    "sigmoid": (lambda: oc.activation_cases("sigmoid"), "tvmk_sigmoid_s8_params",
                "status = tvmk_sigmoid_s8(arr[0], mode ? arr[0] : y, &p, NULL);"),
    "tanh": (lambda: oc.activation_cases("tanh"), "tvmk_tanh_s8_params",
             "status = tvmk_tanh_s8(arr[0], mode ? arr[0] : y, &p, NULL);"),
    "pad": (oc.pad_cases, "tvmk_pad_s8_params", "status = tvmk_pad_s8(arr[0], y, &p, NULL);"),
    "mean": (oc.mean_cases, "tvmk_mean_s8_params",
             "status = tvmk_mean_s8(arr[0], y, &p, NULL);"),
    "concat": (oc.concat_cases, "tvmk_concat_s8_params",
               "status = tvmk_concat_s8((const int8_t *const *)arr, y, &p, NULL);"),
}

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tvmk_s8_ops.h"

#define MAX_ARRAYS 16

static int32_t read_i32(FILE *f)
{
    int32_t v = 0;
    if (fread(&v, sizeof v, 1, f) != 1) {
        exit(2);
    }
    return v;
}

static int8_t *read_s8(FILE *f, int32_t n)
{
    int8_t *p = (int8_t *)malloc((size_t)(n > 0 ? n : 1));
    if (p == NULL || (n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n)) {
        exit(2);
    }
    return p;
}

int main(int argc, char **argv)
{
    FILE *in;
    FILE *out;
    int32_t ncases, c, k;

    if (argc != 3 || (in = fopen(argv[1], "rb")) == NULL || (out = fopen(argv[2], "wb")) == NULL) {
        return 2;
    }
    ncases = read_i32(in);
    for (c = 0; c < ncases; ++c) {
        struct STRUCT p;
        int8_t *arr[MAX_ARRAYS];
        const int32_t mode = read_i32(in);
        const int32_t pbytes = read_i32(in);
        int32_t narr, out_len;
        int32_t status = 12345;
        int8_t *y;

        if (pbytes != (int32_t)sizeof p || fread(&p, 1, sizeof p, in) != sizeof p) {
            fprintf(stderr, "params size %d, struct %d\n", (int)pbytes, (int)sizeof p);
            return 3;
        }
        narr = read_i32(in);
        for (k = 0; k < MAX_ARRAYS; ++k) {
            arr[k] = k < narr ? read_s8(in, read_i32(in)) : NULL;
        }
        out_len = read_i32(in);
        y = (int8_t *)malloc((size_t)(out_len > 0 ? out_len : 1));
        if (y == NULL) {
            return 2;
        }
        memset(y, 0x5A, (size_t)(out_len > 0 ? out_len : 1));
        CALL
        fwrite(&status, sizeof status, 1, out);
        fwrite(mode ? arr[0] : y, 1, (size_t)out_len, out);
        for (k = 0; k < narr; ++k) {
            free(arr[k]);
        }
        free(y);
    }
    fclose(in);
    fclose(out);
    return 0;
}
"""


def pack(struct_name: str, p: dict[str, Any]) -> bytes:
    """The params struct's bytes; its fields must be exactly the struct's."""
    fields = STRUCTS[struct_name]
    assert set(p) == {name for name, _ in fields}, (struct_name, sorted(p))
    values: list[int] = []
    for name, n in fields:
        v = p[name]
        values += [int(x) for x in v] if n > 1 else [int(v)]
        assert n == 1 or len(v) == n, name
    data = struct.pack(f"<{len(values)}i", *values)
    if struct_name in scratch_structs():  # scratch_bytes 0 and scratch NULL (64-bit host)
        data += struct.pack("<i", 0)
        data += b"\0" * (-len(data) % 8) + b"\0" * 8
    return data


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The int8 kernels compiled once with the strict flags (status.h from tvmdev)."""
    gcc = need_tool("gcc", "compiles the int8 kernels")
    root = tmp_path_factory.mktemp("s8_kernels")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["new-device", "woofles", "--platform", "posix", "-o",
                     str(root / "dev")]) == 0
    includes = [f"-I{PORTABLE}", f"-I{root / 'dev' / 'include'}"]
    run_ok([gcc, *STRICT, *includes, "-c", *[str(PORTABLE / s) for s in SOURCES]], cwd=root)
    return root, [*includes, *[str(root / s.replace(".c", ".o")) for s in SOURCES]]


def run_kernel(objects: tuple[Path, list[str]], op: str, cases: list[tuple[int, Case]]
               ) -> list[tuple[int, np.ndarray]]:
    """Run ``op``'s kernel on every (mode, case); mode 1 computes in place into input 0."""
    root, args = objects
    _, struct_name, call = OPS[op]
    work = root / op
    work.mkdir(exist_ok=True)
    src = work / "driver.c"
    src.write_text(DRIVER.replace("STRUCT", struct_name).replace("CALL", call))
    exe = work / "driver"
    run_ok(["gcc", *STRICT, str(src), *args, "-o", str(exe)])
    blob = bytearray(struct.pack("<i", len(cases)))
    sizes = []
    for mode, case in cases:
        params = pack(struct_name, case.params)
        blob += struct.pack("<ii", mode, len(params)) + params
        blob += struct.pack("<i", len(case.arrays))
        for a in case.arrays:
            flat = np.ascontiguousarray(a, np.int8).ravel()
            blob += struct.pack("<i", flat.size) + flat.tobytes()
        size = case.ref.size if case.ref is not None else 0
        sizes.append(size)
        blob += struct.pack("<i", size)
    (work / "in.bin").write_bytes(bytes(blob))
    run_ok([str(exe), str(work / "in.bin"), str(work / "out.bin")])
    raw, pos, results = (work / "out.bin").read_bytes(), 0, []
    for size in sizes:
        (status,) = struct.unpack_from("<i", raw, pos)
        results.append((status, np.frombuffer(raw, np.int8, size, pos + 4)))
        pos += 4 + size
    assert pos == len(raw)
    return results


@pytest.mark.parametrize("op", list(OPS))
def test_kernel_matches_tflm(objects: tuple[Path, list[str]], op: str) -> None:
    """Every case: the C kernel's output is TFLM's, bit for bit (and so the reference's);
    elementwise kernels also computed in place."""
    cases = OPS[op][0]()
    runs = [(0, c) for c in cases]
    if op in ("add", "mul", "sigmoid", "tanh"):
        runs += [(1, c) for c in cases if c.ref is not None and
                 c.ref.size == c.arrays[0].size]
    results = run_kernel(objects, op, runs)
    want = {id(c): c.tflm() for c in cases}
    bad = []
    for (mode, case), (status, got) in zip(runs, results, strict=True):
        if status != OK or not np.array_equal(got, want[id(case)].ravel()):
            bad.append(f"{case.label} (mode {mode}): status {status}")
    assert not bad, "\n".join(bad[:10])
    assert len(runs) >= 20


def test_softmax_refuses_what_tflm_aborts_on(objects: tuple[Path, list[str]]) -> None:
    """A row whose sum of exps reaches 512 (1000 near-equal values): TFLM aborts on its
    TFLITE_CHECK; the numpy reference raises and the kernel returns an error."""
    q = oc.fixed_quant(1e-3, 0)
    p = softmax.params((1, 1000), 1.0, q, oc.fixed_quant(1 / 256, -128))
    x = np.zeros((1, 1000), np.int8)
    with pytest.raises(ValueError, match="aborts"):
        softmax.reference(x, p)
    case = Case("softmax 1000 zeros", SOFTMAX, [Tensor([1, 1000], q)],
                Tensor([1, 1000], oc.fixed_quant(1 / 256, -128)),
                ("SoftmaxOptions", {"Beta": 1.0}), [x], p, np.zeros((1, 1000), np.int8))
    [(status, _)] = run_kernel(objects, "softmax", [(0, case)])
    assert status == ERR_INVALID
    # TFLM itself dies on it (in a child process: the abort would end this one).
    tflm_ref.runtime()
    model = objects[0] / "softmax_abort.tflite"
    model.write_bytes(case.model())
    child = subprocess.run([sys.executable, "-c", TFLM_CHILD, str(model)],
                           capture_output=True, text=True)
    assert child.returncode != 0 and "invoked" not in child.stdout, child.stderr[-500:]
    assert "ModuleNotFoundError" not in child.stderr


TFLM_CHILD = """
import sys
import numpy as np
from tflite_micro.python.tflite_micro import runtime
interp = runtime.Interpreter.from_bytes(open(sys.argv[1], "rb").read())
interp.set_input(np.zeros((1, 1000), np.int8), 0)
interp.invoke()
print("invoked")
"""
