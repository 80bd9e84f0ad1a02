"""The portable C99 kernel library (runtime/kernels/portable) against numpy.

Every kernel source is compiled once with the strict flags the library promises to
build with; each test then compiles one small C driver that reads its cases (params
struct bytes, input arrays, the output buffer's initial contents) from a binary file,
calls the kernel on each case and writes back its status and output. References are
computed independently in float64 numpy.

Tolerance: float32 results are compared with rtol=1e-4, atol=1e-5 against the float64
reference (inputs are kept in [-1, 1] or similar so that sums stay well conditioned).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, need_tool, run_ok

from tvmdev.cli import main
from tvmdev.load.board import board_by_name
from tvmdev.model.ops import OPS
from tvmdev.model.scratch import Tuning, gemm_full_bytes, gemm_pack

PORTABLE = REPO / "runtime" / "kernels" / "portable"
KERNEL_SOURCES = ["gemm.c", "matmul.c", "add.c", "mul.c", "relu.c", "sigmoid.c", "tanh.c",
                  "softmax.c", "reshape.c", "flatten.c", "transpose.c", "conv2d.c",
                  "maxpool2d.c", "avgpool2d.c", "depthwise_conv2d.c", "fully_connected.c",
                  "clip.c", "pad.c", "mean.c", "concat.c"]
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]
RTOL, ATOL = 1e-4, 1e-5
MAX_DIMS = 6
OK, ERR_INVALID = 0, -4

RNG = np.random.default_rng(20240607)


def rand(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.uniform(-1.0, 1.0, size=shape) * scale).astype(np.float32)


# --- building and running drivers -------------------------------------------------------

@dataclass
class Build:
    root: Path
    includes: list[str]
    objects: list[str]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """Every kernel compiled once with the strict flags; status.h from tvmdev itself."""
    return compile_kernels(tmp_path_factory.mktemp("portable_kernels"))


def compile_kernels(root: Path) -> Build:
    """Every kernel compiled in ``root`` with the strict flags."""
    gcc = need_tool("gcc", "compiles the portable kernels")
    dev = root / "dev"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["new-device", "woofles", "--platform", "posix", "-o", str(dev)]) == 0
    includes = [f"-I{PORTABLE}", f"-I{dev / 'include'}"]
    objdir = root / "obj"
    objdir.mkdir()
    run_ok([gcc, *STRICT, *includes, "-c", *[str(PORTABLE / s) for s in KERNEL_SOURCES]],
           cwd=objdir)
    objects = [str(objdir / s.replace(".c", ".o")) for s in KERNEL_SOURCES]
    return Build(root, includes, objects)


DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tvmk_portable.h"

#define MAX_ARRAYS 8

static int32_t read_i32(FILE *f)
{
    int32_t v = 0;
    if (fread(&v, sizeof v, 1, f) != 1) {
        fprintf(stderr, "short read\n");
        exit(2);
    }
    return v;
}

static float *read_f32(FILE *f, int32_t n)
{
    float *p = (float *)malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (p == NULL || (n > 0 && fread(p, sizeof(float), (size_t)n, f) != (size_t)n)) {
        fprintf(stderr, "short read\n");
        exit(2);
    }
    return p;
}

int main(int argc, char **argv)
{
    FILE *in;
    FILE *out;
    int32_t ncases, c, k;

    if (argc != 3) {
        return 2;
    }
    in = fopen(argv[1], "rb");
    out = fopen(argv[2], "wb");
    if (in == NULL || out == NULL) {
        return 2;
    }
    ncases = read_i32(in);
    for (c = 0; c < ncases; ++c) {
        unsigned char pbuf[512];
        float *arr[MAX_ARRAYS];
        int32_t len[MAX_ARRAYS];
        const int32_t mode = read_i32(in);
        const int32_t pbytes = read_i32(in);
        int32_t narr, out_len;
        int32_t status = 12345;
        float *y;

        if (pbytes > (int32_t)sizeof pbuf ||
            fread(pbuf, 1, (size_t)pbytes, in) != (size_t)pbytes) {
            return 2;
        }
        narr = read_i32(in);
        if (narr > MAX_ARRAYS) {
            return 2;
        }
        for (k = 0; k < MAX_ARRAYS; ++k) {
            len[k] = k < narr ? read_i32(in) : 0;
            arr[k] = k < narr ? read_f32(in, len[k]) : NULL;
        }
        out_len = read_i32(in);
        y = read_f32(in, out_len);
        (void)mode;
        (void)len;
        {
            BODY
        }
        fwrite(&status, sizeof status, 1, out);
        fwrite(y, sizeof(float), (size_t)out_len, out);
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


def body(struct_name: str, call: str) -> str:
    """A driver body: params copied into the kernel's struct, then ``call``."""
    return (f"struct {struct_name} p;\n"
            "if (pbytes != (int32_t)sizeof p) { fprintf(stderr, \"params size\\n\"); return 3; }\n"
            "memcpy(&p, pbuf, sizeof p);\n"
            f"{call}\n")


@dataclass
class Case:
    params: bytes
    arrays: list[np.ndarray]
    out: np.ndarray  # the output buffer's initial contents (NaN, or the aliased input)
    mode: int = 0
    expect: np.ndarray | None = None
    label: str = ""


def nan_out(n: int) -> np.ndarray:
    return np.full(n, np.nan, dtype=np.float32)


def run_cases(build: Build, name: str, code: str, cases: list[Case],
              objects: list[str] | None = None) -> list[tuple[int, np.ndarray]]:
    """Compile the driver for ``code`` and run every case; returns (status, output)."""
    work = build.root / name
    work.mkdir()
    src = work / "driver.c"
    src.write_text(DRIVER.replace("BODY", code))
    exe = work / "driver"
    run_ok(["gcc", *STRICT, *build.includes, str(src), *(objects or build.objects), "-lm",
            "-o", str(exe)])
    blob = bytearray(struct.pack("<i", len(cases)))
    for case in cases:
        blob += struct.pack("<ii", case.mode, len(case.params)) + case.params
        blob += struct.pack("<i", len(case.arrays))
        for a in case.arrays:
            flat = np.ascontiguousarray(a, dtype=np.float32).ravel()
            blob += struct.pack("<i", flat.size) + flat.tobytes()
        out = np.ascontiguousarray(case.out, dtype=np.float32).ravel()
        blob += struct.pack("<i", out.size) + out.tobytes()
    (work / "in.bin").write_bytes(bytes(blob))
    run_ok([str(exe), str(work / "in.bin"), str(work / "out.bin")])
    raw = (work / "out.bin").read_bytes()
    results = []
    pos = 0
    for case in cases:
        (status,) = struct.unpack_from("<i", raw, pos)
        pos += 4
        n = case.out.size
        results.append((status, np.frombuffer(raw, dtype=np.float32, count=n, offset=pos)))
        pos += 4 * n
    assert pos == len(raw)
    return results


def check(build: Build, name: str, code: str, cases: list[Case],
          objects: list[str] | None = None) -> None:
    results = run_cases(build, name, code, cases, objects)
    for case, (status, got) in zip(cases, results, strict=True):
        assert status == OK, case.label
        assert case.expect is not None
        want = np.asarray(case.expect, dtype=np.float64).ravel()
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=case.label)


def i32(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


def padded(values: list[int] | tuple[int, ...]) -> list[int]:
    return list(values) + [0] * (MAX_DIMS - len(values))


def contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return strides[::-1]


# --- gemm / matmul ----------------------------------------------------------------------

GEMM_SHAPES = [(1, 1, 1), (1, 17, 33), (7, 5, 3), (65, 33, 129), (128, 64, 96),
               (9, 1, 40), (20, 300, 200)]

# The scratch a call is given: the driver allocates params.scratch_bytes (the kernel must
# not depend on what is there: it is filled with NaN patterns) and puts a guard after it
# that the kernel must not touch (status 77 if it does).
SCRATCH_CALL = """
unsigned char *scratch = (unsigned char *)malloc((size_t)p.scratch_bytes + 64U);
int32_t g;
if (scratch == NULL) { return 2; }
memset(scratch, 0xFF, (size_t)p.scratch_bytes);
memset(scratch + p.scratch_bytes, 0xA5, 64U);
p.scratch = p.scratch_bytes > 0 ? scratch : NULL;
CALL
for (g = 0; g < 64; ++g) {
    if (scratch[p.scratch_bytes + g] != 0xA5) { status = 77; }
}
free(scratch);
"""

GEMM_CODE = body("tvmk_gemm_params", SCRATCH_CALL.replace("CALL", """
if (mode == 2) {
    /* C aliases Y: Y's initial contents are C. */
    status = tvmk_gemm_f32(arr[0], arr[1], y, y, &p, NULL);
} else {
    status = tvmk_gemm_f32(arr[0], arr[1], mode == 1 ? arr[2] : NULL, y, &p, NULL);
}"""))


# gemm.c's tuning macros, each with the Tuning tvmdev plans its scratch with: the host
# defaults, the micro-controller defaults (a 4 x 4 tile, 4 KiB of scratch at most) and an
# odd configuration that splits K and N into many blocks.
GEMM_TUNINGS = {
    "host": Tuning(),
    "mcu": Tuning(4, 4, 64, 4096),
    "odd": Tuning(3, 5, 7, 1024),
}


def gemm_params(m: int, n: int, k: int, ta: int, tb: int, alpha: float, beta: float, sm: int,
                sn: int, scratch_bytes: int) -> bytes:
    """struct tvmk_gemm_params, with a NULL scratch pointer (the driver sets it)."""
    return struct.pack("@5i2f3iiP", m, n, k, ta, tb, alpha, beta, sm, sn, 0, scratch_bytes, 0)


def gemm_objects(build: Build, tuning: str) -> list[str]:
    """The kernel objects with gemm.c compiled for ``tuning``."""
    obj = build.root / f"gemm_{tuning}.o"
    if not obj.is_file():
        defines = [f"-D{d}" for d in GEMM_TUNINGS[tuning].defines()]
        run_ok(["gcc", *STRICT, *build.includes, *defines, "-c", str(PORTABLE / "gemm.c"),
                "-o", str(obj)])
    return [str(obj) if o.endswith("/gemm.o") else o for o in build.objects]


# The host tuning stays in the fast lane; the board tunings run in the slow one.
@pytest.mark.parametrize("tuning", [t if t == "host" else pytest.param(t, marks=pytest.mark.slow)
                                    for t in GEMM_TUNINGS])
def test_gemm(build: Build, tuning: str) -> None:
    """Every shape, transposition and C against numpy, with the scratch tvmdev plans, none,
    one strip of B and all of B: the results must be identical bit for bit."""
    t = GEMM_TUNINGS[tuning]
    cases = []
    for (m, n, k), ta, tb in itertools.product(GEMM_SHAPES, (0, 1), (0, 1)):
        a = rand(k, m) if ta else rand(m, k)
        b = rand(n, k) if tb else rand(k, n)
        prod = (a.astype(np.float64).T if ta else a.astype(np.float64)) @ \
            (b.astype(np.float64).T if tb else b.astype(np.float64))
        kc = min(t.gemm_kc, k)
        one_strip = 4 * (t.gemm_mr * t.gemm_nr + t.gemm_mr * kc + t.gemm_nr * kc)
        sizes = {"planned": gemm_pack({"M": m, "N": n, "K": k}, t), "none": 0,
                 "one strip": one_strip, "one strip - 4": one_strip - 4,
                 "all": gemm_full_bytes(m, n, k, t)}
        # C shapes: absent, (N,), (M, 1), (1, 1), (M, N); the last also computed in place.
        variants: list[tuple[str, tuple[int, ...] | None, int, int, int]] = [
            ("none", None, 0, 0, 0), ("N", (n,), 0, 1, 1), ("M1", (m, 1), 1, 0, 1),
            ("11", (1, 1), 0, 0, 1), ("MN", (m, n), n, 1, 1), ("MN-inplace", (m, n), n, 1, 2)]
        for label, cshape, sm, sn, mode in variants:
            alpha, beta = (1.0, 0.0) if label == "none" and ta == tb == 0 else (0.75, -1.5)
            expect = alpha * prod
            arrays = [a, b]
            out = nan_out(m * n)
            if cshape is not None:
                c = rand(*cshape)
                expect = expect + beta * np.broadcast_to(c.astype(np.float64), (m, n))
                arrays.append(c)
                if mode == 2:
                    out = c.copy()
            for scratch, nbytes in sizes.items():
                cases.append(Case(gemm_params(m, n, k, ta, tb, alpha, beta, sm, sn, nbytes),
                                  arrays, out, mode, expect,
                                  f"gemm M,N,K={m},{n},{k} ta={ta} tb={tb} C={label} "
                                  f"scratch={scratch} ({nbytes} bytes)"))
    objects = gemm_objects(build, tuning)
    check(build, f"gemm_{tuning}", GEMM_CODE, cases, objects)
    results = run_cases(build, f"gemm_{tuning}_again", GEMM_CODE, cases, objects)
    for i in range(0, len(cases), 5):
        for j in range(i + 1, i + 5):
            assert results[j][1].tobytes() == results[i][1].tobytes(), cases[j].label


def test_gemm_scratch_bytes_agrees_with_the_planner(build: Build) -> None:
    """tvmk_gemm_scratch_bytes (C) and gemm_full_bytes (the planner) for every tuning."""
    shapes = [(m, n, k) for m in (0, 1, 7) for n in (0, 1, 5, 16, 17, 300)
              for k in (0, 1, 7, 64, 65, 200)]
    code = "".join(f"y[{i}] = (float)tvmk_gemm_scratch_bytes({m}, {n}, {k});\n"
                   for i, (m, n, k) in enumerate(shapes)) + "status = 0;\n"
    for tuning, t in GEMM_TUNINGS.items():
        ((status, got),) = run_cases(build, f"scratch_bytes_{tuning}", code,
                                     [Case(b"", [], nan_out(len(shapes)))],
                                     gemm_objects(build, tuning))
        assert status == OK
        assert got.tolist() == [float(gemm_full_bytes(m, n, k, t)) for m, n, k in shapes]


MAX_BATCH_DIMS = MAX_DIMS - 2

# numpy batching: whole batches, dims broadcast on either side, missing leading dims,
# 1-D operands (a row for A, a column for B, the added dim dropped), up to 6 dims.
MATMUL_SHAPES: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((3, 4, 6), (3, 6, 5)), ((4, 7, 9), (9, 3)), ((6, 5), (2, 5, 17)), ((1, 1), (1, 1)),
    ((3, 33, 70), (3, 70, 20)), ((3, 1, 3, 4), (1, 2, 4, 2)), ((2, 1, 5), (5,)),
    ((5,), (2, 5, 3)), ((1, 2, 3), (4, 1, 3, 2)), ((7,), (7, 4)), ((2, 3, 1, 4, 5), (3, 2, 5, 2)),
    ((2, 1, 3, 1, 4, 5), (1, 2, 1, 3, 5, 3)), ((4, 1, 9, 8), (1, 3, 8, 1)),
]


def matmul_params(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> list[int]:
    """struct tvmk_matmul_params for np.matmul(A, B) up to its scratch fields, worked out
    here from numpy's rules."""
    a2 = (1, *a_shape) if len(a_shape) == 1 else a_shape
    b2 = (*b_shape, 1) if len(b_shape) == 1 else b_shape
    (m, k), n = a2[-2:], b2[-1]
    batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))

    def strides(dims: tuple[int, ...], matrix: int) -> list[int]:
        full = (1,) * (len(batch) - len(dims)) + dims
        return [0 if full[d] == 1 else s * matrix
                for d, s in enumerate(contiguous_strides(full))]

    fill = MAX_BATCH_DIMS - len(batch)
    return [int(np.prod(batch, dtype=np.int64)), m, n, k, len(batch), *batch, *[1] * fill,
            *strides(a2[:-2], m * k), *[0] * fill, *strides(b2[:-2], k * n), *[0] * fill, 0]


def matmul_struct(ints: list[int], scratch_bytes: int = 0) -> bytes:
    """The struct's bytes: ``ints``, then scratch_bytes and a NULL scratch pointer (the
    driver sets it)."""
    return struct.pack(f"@{len(ints) + 1}iP", *ints, scratch_bytes, 0)


def test_matmul_numpy_batching(build: Build) -> None:
    """Every product reuses the call's scratch; none works too, with the same results."""
    code = body("tvmk_matmul_params", SCRATCH_CALL.replace(
        "CALL", "status = tvmk_matmul_f32(arr[0], arr[1], y, &p, NULL);"))
    cases = []
    for a_shape, b_shape in MATMUL_SHAPES:
        a, b = rand(*a_shape), rand(*b_shape)
        expect = np.matmul(a.astype(np.float64), b.astype(np.float64))
        a2 = (1, *a_shape) if len(a_shape) == 1 else a_shape
        mnk = {"M": a2[-2], "N": (b_shape[-1] if len(b_shape) > 1 else 1), "K": a2[-1]}
        for nbytes in (gemm_pack(mnk, Tuning()), 0):
            cases.append(Case(matmul_struct(matmul_params(a_shape, b_shape), nbytes), [a, b],
                              nan_out(max(expect.size, 1)), 0, expect,
                              f"matmul {list(a_shape)} x {list(b_shape)} scratch {nbytes}"))
    check(build, "matmul", code, cases)
    results = run_cases(build, "matmul_again", code, cases)
    for i in range(0, len(cases), 2):
        assert results[i][1].tobytes() == results[i + 1][1].tobytes(), cases[i].label


def test_matmul_params_match_numpy() -> None:
    """The params tvmdev generates are the ones worked out above from numpy's rules."""
    for a_shape, b_shape in MATMUL_SHAPES:
        out = np.matmul(np.zeros(a_shape), np.zeros(b_shape)).shape
        assert OPS["matmul"].infer([a_shape, b_shape], {}) == out
        got = OPS["matmul"].params([a_shape, b_shape], out, {})
        want = matmul_params(a_shape, b_shape)
        assert [got["batch"], got["M"], got["N"], got["K"], got["ndim"], *got["shape"],
                *got["a_strides"], *got["b_strides"], got["b_constant"]] == want, (a_shape,
                                                                                   b_shape)


def test_matmul_rejects_inconsistent_params(build: Build) -> None:
    code = body("tvmk_matmul_params",
                "status = tvmk_matmul_f32(arr[0], arr[1], y, &p, NULL);")
    good = matmul_params((3, 1, 3, 4), (1, 2, 4, 2))
    bad = {"batch is not the product of the shape": (0, 5),
           "too many batch dims": (4, MAX_BATCH_DIMS + 1),
           "a batch dim of 0": (5, 0),
           "a negative stride": (4 + 1 + MAX_BATCH_DIMS, -12)}
    cases = []
    for label, (field, value) in bad.items():
        params = list(good)
        params[field] = value
        cases.append(Case(matmul_struct(params), [rand(3, 1, 3, 4), rand(1, 2, 4, 2)],
                          nan_out(36), label=label))
    for case, (status, got) in zip(cases, run_cases(build, "matmul_bad", code, cases),
                                   strict=True):
        assert status == ERR_INVALID, case.label
        assert np.isnan(got).all(), case.label


# --- add / mul --------------------------------------------------------------------------

def binary_params(a_shape: tuple[int, ...], b_shape: tuple[int, ...]
                  ) -> tuple[bytes, tuple[int, ...]]:
    out_shape = tuple(np.broadcast_shapes(a_shape, b_shape))
    ndim = len(out_shape)

    def strides(shape: tuple[int, ...]) -> list[int]:
        full = (1,) * (ndim - len(shape)) + tuple(shape)
        contig = contiguous_strides(full)
        return [0 if full[d] == 1 else contig[d] for d in range(ndim)]

    count = int(np.prod(out_shape, dtype=np.int64))
    return (i32(ndim, count, *padded(out_shape), *padded(strides(a_shape)),
                *padded(strides(b_shape)), 0), out_shape)


BINARY_SHAPES = [((3, 4, 5), (3, 4, 5)), ((3, 4, 5), ()), ((), (2, 3)), ((4, 5), (5,)),
                 ((4, 5), (4, 1)), ((2, 1, 4, 5), (3, 1, 5)), ((1, 3, 1, 2), (2, 1, 4, 1)),
                 ((7,), (7,)), ((1,), (1,))]


@pytest.mark.parametrize("op", ["add", "mul"])
def test_binary(build: Build, op: str) -> None:
    code = body("tvmk_binary_params", f"""
if (mode == 1) {{
    status = tvmk_{op}_f32(y, arr[1], y, &p, NULL); /* output aliases A */
}} else if (mode == 2) {{
    status = tvmk_{op}_f32(arr[0], y, y, &p, NULL); /* output aliases B */
}} else {{
    status = tvmk_{op}_f32(arr[0], arr[1], y, &p, NULL);
}}""")
    fn = np.add if op == "add" else np.multiply
    cases = []
    for a_shape, b_shape in BINARY_SHAPES:
        a, b = rand(*a_shape), rand(*b_shape)
        params, out_shape = binary_params(a_shape, b_shape)
        expect = fn(a.astype(np.float64), b.astype(np.float64))
        n = int(np.prod(out_shape, dtype=np.int64))
        label = f"{op} {a_shape} {b_shape}"
        cases.append(Case(params, [a, b], nan_out(n), 0, expect, label))
        if tuple(a_shape) == out_shape:
            cases.append(Case(params, [a, b], a.copy(), 1, expect, label + " in place on A"))
        if tuple(b_shape) == out_shape:
            cases.append(Case(params, [a, b], b.copy(), 2, expect, label + " in place on B"))
    # Operands that are not contiguous (a transposed view, every other element): strides
    # the generator may fold into the params, which take the kernel's general path.
    a, b = rand(4, 3), rand(3, 8)
    params = i32(2, 12, *padded([3, 4]), *padded([1, 3]), *padded([8, 2]), 0)
    cases.append(Case(params, [a, b], nan_out(12), 0,
                      fn(a.T.astype(np.float64), b[:, ::2].astype(np.float64)),
                      f"{op} strided operands"))
    assert sum(c.mode == 1 for c in cases) >= 4
    check(build, op, code, cases)


# --- unary and copies -------------------------------------------------------------------

UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0.0),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
    "reshape": lambda x: x,
    "flatten": lambda x: x,
}


@pytest.mark.parametrize("op", list(UNARY))
def test_unary(build: Build, op: str) -> None:
    code = body("tvmk_unary_params", f"""
if (mode == 1) {{
    status = tvmk_{op}_f32(y, y, &p, NULL); /* in place */
}} else {{
    status = tvmk_{op}_f32(arr[0], y, &p, NULL);
}}""")
    inputs = [rand(1), rand(37, scale=4.0), rand(3, 5, 7, scale=8.0),
              np.array([-100.0, 100.0, -30.0, 30.0, 0.0, -0.0, 1e-3, -1e-3], np.float32)]
    cases = []
    for x in inputs:
        expect = UNARY[op](x.astype(np.float64))
        cases.append(Case(i32(x.size), [x], nan_out(x.size), 0, expect, f"{op} {x.shape}"))
        cases.append(Case(i32(x.size), [x], x.copy(), 1, expect, f"{op} {x.shape} in place"))
    check(build, op, code, cases)


def test_sigmoid_saturates_without_overflow(build: Build) -> None:
    code = body("tvmk_unary_params", "status = tvmk_sigmoid_f32(arr[0], y, &p, NULL);")
    x = np.array([-100.0, 100.0, -88.0, 88.0, -1e4, 1e4], np.float32)
    ((status, got),) = run_cases(build, "sigmoid_sat", code,
                                 [Case(i32(x.size), [x], nan_out(x.size))])
    assert status == OK
    assert np.all(np.isfinite(got))
    assert got[1] == 1.0 and got[5] == 1.0
    assert 0.0 <= got[0] < 1e-40 and got[4] == 0.0


# --- softmax / transpose ----------------------------------------------------------------

def test_softmax(build: Build) -> None:
    code = body("tvmk_softmax_params", """
if (mode == 1) {
    status = tvmk_softmax_f32(y, y, &p, NULL); /* in place */
} else {
    status = tvmk_softmax_f32(arr[0], y, &p, NULL);
}""")
    cases = []
    for shape, axes in [((3, 4, 5), (0, 1, -1)), ((2, 3, 70), (1, 2)), ((6,), (0,))]:
        x = rand(*shape, scale=120.0)  # large logits: expf overflows without the max shift
        for axis in axes:
            ax = axis % len(shape)
            outer = int(np.prod(shape[:ax], dtype=np.int64))
            inner = int(np.prod(shape[ax + 1:], dtype=np.int64))
            x64 = x.astype(np.float64)
            e = np.exp(x64 - x64.max(axis=ax, keepdims=True))
            expect = e / e.sum(axis=ax, keepdims=True)
            params = i32(outer, shape[ax], inner)
            for mode in (0, 1):
                out = x.copy() if mode else nan_out(x.size)
                cases.append(Case(params, [x], out, mode, expect,
                                  f"softmax {shape} axis={axis} inplace={mode}"))
    check(build, "softmax", code, cases)


def test_transpose(build: Build) -> None:
    code = body("tvmk_transpose_params",
                "status = tvmk_transpose_f32(arr[0], y, &p, NULL);")
    cases = []
    for shape, perm in [((2, 3, 4, 5), (2, 0, 3, 1)), ((2, 3, 4, 5), (3, 2, 1, 0)),
                        ((5, 7), (1, 0)), ((2, 3, 1, 2, 3, 2), (5, 0, 4, 1, 3, 2)),
                        ((4, 6), (0, 1)), ((3, 1, 4), (1, 2, 0))]:
        x = rand(*shape)
        in_strides = contiguous_strides(shape)
        out_shape = [shape[q] for q in perm]
        params = i32(len(shape), x.size, *padded(out_shape),
                     *padded([in_strides[q] for q in perm]))
        cases.append(Case(params, [x], nan_out(x.size), 0, np.transpose(x, perm),
                          f"transpose {shape} perm={perm}"))
    check(build, "transpose", code, cases)


# --- conv / pooling ---------------------------------------------------------------------

def conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, strides: tuple[int, int],
             pads: tuple[int, int, int, int], dils: tuple[int, int], group: int) -> np.ndarray:
    """ONNX Conv, NCHW; pads = (top, left, bottom, right) as ONNX orders them."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    pt, pl, pb, pr = pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dils[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pl + pr - dils[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for mi in range(m):
        g = mi // mg
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(oh):
            for j in range(ow):
                win = xs[:, :, i * strides[0]:i * strides[0] + dils[0] * (kh - 1) + 1:dils[0],
                         j * strides[1]:j * strides[1] + dils[1] * (kw - 1) + 1:dils[1]]
                y[:, mi, i, j] = np.tensordot(win, w[mi].astype(np.float64), axes=3)
        if b is not None:
            y[:, mi] += float(b[mi])
    return y


def test_conv2d(build: Build) -> None:
    code = body("tvmk_conv2d_params",
                "status = tvmk_conv2d_f32(arr[0], arr[1], mode == 1 ? arr[2] : NULL, y, &p, NULL);")
    cases = []
    configs = [  # (N, C, H, W), (M, KH, KW), strides, pads (t, l, b, r), dilations, group
        ((2, 4, 9, 11), (6, 3, 2), (2, 2), (1, 2, 1, 0), (2, 2), 2),
        ((1, 3, 8, 8), (4, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
        ((1, 4, 7, 6), (4, 3, 3), (1, 2), (1, 1, 1, 1), (1, 1), 4),  # depthwise
        ((1, 2, 5, 5), (3, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
        ((1, 1, 4, 4), (1, 4, 4), (3, 3), (2, 2, 2, 2), (1, 1), 1),  # taps mostly in padding
    ]
    for (n, c, h, wd), (m, kh, kw), st, pads, dil, group in configs:
        x = rand(n, c, h, wd)
        w = rand(m, c // group, kh, kw)
        b = rand(m)
        oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // st[0] + 1
        ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // st[1] + 1
        params = i32(n, c, h, wd, m, kh, kw, oh, ow, st[0], st[1], pads[0], pads[1],
                     dil[0], dil[1], group, 0, 0)
        for with_bias in (1, 0):
            expect = conv_ref(x, w, b if with_bias else None, st, pads, dil, group)
            assert expect.shape == (n, m, oh, ow)
            cases.append(Case(params, [x, w, b], nan_out(n * m * oh * ow), with_bias, expect,
                              f"conv {x.shape} {w.shape} s={st} p={pads} d={dil} g={group} "
                              f"bias={with_bias}"))
    check(build, "conv2d", code, cases)


def pool_ref(x: np.ndarray, kind: str, k: tuple[int, int], strides: tuple[int, int],
             pads: tuple[int, int, int, int], dils: tuple[int, int], oh: int, ow: int,
             count_include_pad: int = 0) -> np.ndarray:
    """ONNX MaxPool / AveragePool, NCHW, evaluated on an explicitly padded canvas."""
    n, c, h, wd = x.shape
    pt, pl, pb, pr = pads
    # The canvas covers every window (ceil mode may run a window past the padding).
    ch = max(pt + h + pb, (oh - 1) * strides[0] + dils[0] * (k[0] - 1) + 1)
    cw = max(pl + wd + pr, (ow - 1) * strides[1] + dils[1] * (k[1] - 1) + 1)
    fill = -np.inf if kind == "max" else 0.0
    canvas = np.full((n, c, ch, cw), fill)
    canvas[:, :, pt:pt + h, pl:pl + wd] = x
    real = np.zeros((ch, cw))
    real[pt:pt + h, pl:pl + wd] = 1.0
    inpad = np.zeros((ch, cw))
    inpad[:pt + h + pb, :pl + wd + pr] = 1.0
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = slice(i * strides[0], i * strides[0] + dils[0] * (k[0] - 1) + 1, dils[0])
            cols = slice(j * strides[1], j * strides[1] + dils[1] * (k[1] - 1) + 1, dils[1])
            win = canvas[:, :, rows, cols]
            if kind == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                count = (inpad if count_include_pad else real)[rows, cols].sum()
                y[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return y


POOL_CONFIGS = [  # (N, C, H, W), (KH, KW), strides, pads (t, l, b, r), dilations, ceil
    ((2, 3, 9, 10), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),
    ((1, 2, 8, 7), (2, 3), (2, 2), (0, 1, 1, 0), (1, 1), False),
    ((1, 2, 11, 12), (3, 2), (2, 2), (2, 1, 0, 2), (2, 3), False),
    ((1, 1, 7, 7), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True),  # ceil mode: past padding
    ((1, 1, 5, 6), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1), False),
]


def div(v: int, s: int, ceil: bool) -> int:
    return -(-v // s) if ceil else v // s


def pool_cases(kind: str) -> list[Case]:
    cases = []
    for (n, c, h, wd), k, st, pads, dil, ceil in POOL_CONFIGS:
        x = rand(n, c, h, wd)
        oh = div(h + pads[0] + pads[2] - dil[0] * (k[0] - 1) - 1, st[0], ceil) + 1
        ow = div(wd + pads[1] + pads[3] - dil[1] * (k[1] - 1) - 1, st[1], ceil) + 1
        for cip in ((0,) if kind == "max" else (1, 0)):
            params = i32(n, c, h, wd, k[0], k[1], oh, ow, st[0], st[1], *pads, dil[0], dil[1],
                         cip, 0)
            expect = pool_ref(x, kind, k, st, pads, dil, oh, ow, cip)
            cases.append(Case(params, [x], nan_out(n * c * oh * ow), 0, expect,
                              f"{kind}pool {x.shape} k={k} s={st} p={pads} d={dil} "
                              f"ceil={ceil} count_include_pad={cip}"))
    return cases


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d(build: Build, kind: str) -> None:
    code = body("tvmk_pool2d_params", f"status = tvmk_{kind}pool2d_f32(arr[0], y, &p, NULL);")
    check(build, f"{kind}pool2d", code, pool_cases(kind))


# --- argument checks --------------------------------------------------------------------

def test_null_arguments_are_invalid(build: Build) -> None:
    calls = [
        "tvmk_gemm_f32(NULL, x, NULL, y, &gp, NULL)", "tvmk_gemm_f32(x, x, NULL, y, NULL, NULL)",
        "tvmk_matmul_f32(x, NULL, y, &mp, NULL)", "tvmk_add_f32(x, x, NULL, &bp, NULL)",
        "tvmk_mul_f32(x, x, y, NULL, NULL)", "tvmk_relu_f32(NULL, y, &up, NULL)",
        "tvmk_sigmoid_f32(x, NULL, &up, NULL)", "tvmk_tanh_f32(x, y, NULL, NULL)",
        "tvmk_softmax_f32(NULL, y, &sp, NULL)", "tvmk_reshape_f32(x, NULL, &up, NULL)",
        "tvmk_flatten_f32(x, y, NULL, NULL)", "tvmk_transpose_f32(x, NULL, &tp, NULL)",
        "tvmk_conv2d_f32(x, NULL, NULL, y, &cp, NULL)", "tvmk_maxpool2d_f32(x, y, NULL, NULL)",
        "tvmk_avgpool2d_f32(NULL, y, &pp, NULL)",
        # Scratch of negative size, or a size without a pointer.
        "tvmk_gemm_f32(x, x, NULL, y, &gneg, NULL)", "tvmk_gemm_f32(x, x, NULL, y, &gnull, NULL)",
    ]
    code = (
        "static const float x[4] = {0};\n"
        "struct tvmk_gemm_params gp = {1, 1, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0, 0, NULL};\n"
        "struct tvmk_gemm_params gneg = {1, 1, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0, -4, NULL};\n"
        "struct tvmk_gemm_params gnull = {1, 1, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0, 64, NULL};\n"
        "struct tvmk_matmul_params mp = {1, 1, 1, 1, 0, {1}, {0}, {0}, 0, 0, NULL};\n"
        "struct tvmk_binary_params bp;\n"
        "struct tvmk_unary_params up = {1};\n"
        "struct tvmk_softmax_params sp = {1, 1, 1};\n"
        "struct tvmk_transpose_params tp;\n"
        "struct tvmk_conv2d_params cp = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0};\n"
        "struct tvmk_pool2d_params pp = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0};\n"
        "memset(&bp, 0, sizeof bp); memset(&tp, 0, sizeof tp);\n"
        "status = 0;\n"
        + "".join(f"y[{i}] = (float){call};\n" for i, call in enumerate(calls))
    )
    ((status, got),) = run_cases(build, "nulls", code,
                                 [Case(b"", [], nan_out(len(calls)))])
    assert status == OK
    assert got.tolist() == [float(ERR_INVALID)] * len(calls)


# --- no stack buffers -------------------------------------------------------------------

LOCAL_ARRAY = re.compile(r"^[ \t]+(?:const\s+|static\s+|volatile\s+)*(?P<type>(?:struct\s+)?\w+)"
                         r"\s+\**\s*(?P<name>\w+)(?P<dims>(?:\[[^\]]*\])+)\s*(?:=[^;]*)?;", re.M)
CTYPE_BYTES = {"float": 4, "double": 8, "int": 4, "int32_t": 4, "uint32_t": 4, "int16_t": 2,
               "uint16_t": 2, "int8_t": 1, "uint8_t": 1, "char": 1, "size_t": 8,
               "ptrdiff_t": 8}
MAX_LOCAL_ARRAY = 64
# The one exception: the gemm micro-kernel's MR x NR accumulators, written as a local
# array for the compiler to keep in vector registers (64 bytes with a Cortex-M's 4 x 4
# tile; 5 x 16 floats on hosts, more than SSE's registers hold).
REGISTER_TILES = {("gemm.c", "acc"): 4 * 8 * 16}


def local_arrays(text: str, macros: dict[str, str]) -> list[tuple[str, int]]:
    """(name, bytes) of every array declared inside a function of a C source."""
    def value(expr: str) -> int:
        for _ in range(20):
            expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda t: macros.get(t[0], t[0]), expr)
        expr = re.sub(r"sizeof\s*\(\s*(\w+)\s*\)", lambda t: str(CTYPE_BYTES[t[1]]), expr)
        expr = re.sub(r"\((?:int32_t|size_t|int)\)", "", expr)
        assert re.fullmatch(r"[\d\s()+\-*/]+", expr), f"cannot evaluate {expr!r}"
        return int(eval(expr.replace("/", "//")))  # digits and operators only

    found = []
    for m in LOCAL_ARRAY.finditer(text):
        assert m["type"] in CTYPE_BYTES, f"add the size of {m['type']} ({m[0].strip()})"
        count = 1
        for dim in re.findall(r"\[([^\]]*)\]", m["dims"]):
            count *= value(dim)
        found.append((m["name"], count * CTYPE_BYTES[m["type"]]))
    return found


@pytest.mark.parametrize("target", [pytest.param("host", marks=pytest.mark.slow), "cortex-m"])
def test_no_portable_kernel_has_a_stack_buffer(build: Build, target: str) -> None:
    """Kernels take buffers from their scratch: no local array above 64 bytes, with each
    source's macros as the preprocessor sees them on a host and on a Cortex-M. The
    private headers (all but the public tvmk_*.h) count as sources: the int8 and int16
    kernels' shared bodies are macros there."""
    flags = [] if target == "host" else ["-D__ARM_ARCH_7M__=1"]
    sources = sorted([*PORTABLE.glob("*.c"),
                      *(h for h in PORTABLE.glob("*.h") if not h.name.startswith("tvmk_"))])
    assert len(sources) >= 15
    seen = set()
    for src in sources:
        defs = run_ok(["gcc", "-E", "-dM", *flags, *build.includes, str(src)]).stdout
        macros = dict(re.findall(r"^#define (\w+) (.+)$", defs, re.M))
        for name, nbytes in local_arrays(src.read_text(), macros):
            seen.add((src.name, name))
            limit = MAX_LOCAL_ARRAY
            if target == "host":
                limit = REGISTER_TILES.get((src.name, name), MAX_LOCAL_ARRAY)
            assert nbytes <= limit, f"{src.name}: {name} is {nbytes} bytes on the stack"
    # The scanner sees the small arrays that remain ...
    assert seen >= {("gemm.c", "acc"), ("softmax.c", "maxv"), ("softmax.c", "sum"),
                    ("transpose.c", "idx"), ("transpose.h", "idx"),
                    ("pad_rows.h", "idx")}
    # ... and would see a packing buffer like the one gemm.c had.
    old = "    float pack[TVMK_GEMM_PACK_FLOATS];\n    float acc[TVMK_GEMM_MR * TVMK_GEMM_NR];\n"
    assert local_arrays(old, {"TVMK_GEMM_PACK_FLOATS": "((int32_t)(4096 / 4))",
                              "TVMK_GEMM_MR": "4", "TVMK_GEMM_NR": "4"}) == [
        ("pack", 4096), ("acc", 64)]


@pytest.mark.slow
def test_portable_kernel_frames_are_small_on_cortex_m(tmp_path: Path) -> None:
    """What the compiler says (-fstack-usage): every portable kernel function's frame on a
    Cortex-M3 and a Cortex-M55 (before: 4472 bytes for tvmk_gemm_f32)."""
    cc = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["new-device", "woofles", "--platform", "cmsis", "-o",
                     str(tmp_path / "dev")]) == 0
    for cpu in (["-mcpu=cortex-m3"], ["-mcpu=cortex-m55", "-mfloat-abi=hard"]):
        out = tmp_path / cpu[0][6:]
        out.mkdir()
        run_ok([cc, *cpu, "-mthumb", *STRICT, "-fstack-usage", f"-I{PORTABLE}",
                f"-I{tmp_path / 'dev/include'}", "-c",
                *[str(s) for s in sorted(PORTABLE.glob("*.c"))]], cwd=out)
        frames = {}
        for su in out.glob("*.su"):
            for line in su.read_text().splitlines():
                where, size, kind = line.split("\t")
                frames[where.rsplit(":", 1)[-1]] = (int(size), kind)
        assert frames["tvmk_gemm_f32"][0] > 0
        assert {k for _, k in frames.values()} == {"static"}, frames
        assert max(n for n, _ in frames.values()) <= 512, frames


@pytest.mark.parametrize("board", ["host", "mps2_an385", "mps3_an547", "linux_aarch64"])
def test_board_tuning_is_what_gemm_compiles_to_by_default(build: Build, board: str) -> None:
    """tvmdev passes a board's tuning to the compiler, but a build of its own (tvmdev aot
    output, a Zephyr app) gets gemm.c's defaults for the CPU: they must agree."""
    b = board_by_name(board)
    cc = need_tool(b.toolchain.cc)
    defs = run_ok([cc, *b.toolchain.cflags, *build.includes, "-E", "-dM",
                   str(PORTABLE / "gemm.c")]).stdout
    macros = dict(re.findall(r"^#define (TVMK_GEMM_\w+) (\d+)$", defs, re.M))
    assert (int(macros["TVMK_GEMM_MR"]), int(macros["TVMK_GEMM_NR"]),
            int(macros["TVMK_GEMM_KC"])) == (b.tuning.gemm_mr, b.tuning.gemm_nr,
                                             b.tuning.gemm_kc)
