"""The KleidiAI integration: dispatch by CPU feature, tiling, packing offsets, alpha/beta
writeback, constant packing and fallback; and fully_connected through `tvmdev run
--board linux_aarch64` (every activation, with and without bias, batch 1 and several,
keep_num_dims, weights given at run time), with the device's own counters saying what
KleidiAI served and what it declined.

Without a KleidiAI tree these run against tvmdev's reference micro-kernels
(runtime/kleidiai/tvmdev_kai_reference.c: KleidiAI's interface, naive bodies), on
the host and under qemu-aarch64. With KLEIDIAI_SOURCE_DIR set, the same cases also run
against the real micro-kernels under qemu-aarch64: f32 NEON (-cpu cortex-a53 and with
SME masked off), SME (-cpu max; QEMU 7.2 has SME but not SME2), and int4 with i8mm and
with dotprod. Y is compared with numpy in float64: |y - r| <= 1e-4 + 1e-4 |r|, except the
real int4 kernels, which quantise the activations to int8 per row: relative RMS error
below 2%. int4 references use the dequantised weights.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_tool, run_ok

from tvmdev.load.platform import platform_by_name
from tvmdev.model.quant import quantize
from tvmdev.run.trees import compile_trees, platform_tree

NEON, DOTPROD, I8MM, SME, SME2 = 1, 2, 4, 8, 16
DECLINED = -7
SRC = REPO / "runtime/kleidiai"
KLEIDIAI = os.environ.get("KLEIDIAI_SOURCE_DIR")


def build(cli: Callable[..., Result], tmp: Path, cc: str, real: Path | None = None,
          driver: str = "kai_gemm_test") -> Path:
    dev = tmp / "dev"
    if not dev.exists():
        assert cli("new-device", "kleidiai", "--platform", "kleidiai", "-o", str(dev)).code == 0
    flags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{dev}/include",
             f"-I{dev}/src/kleidiai"]
    objects: list[str] = []
    if real is not None:
        flags += [f"-I{real}", "-DTVMDEV_KAI_REAL"]
        build = platform_tree(platform_by_name("kleidiai"), real)
        assert build is not None
        objects = [str(o) for o in compile_trees(cc, [], [build])]
    exe = tmp / f"{driver}_{Path(cc).name}{'_real' if real else ''}"
    # The matmul driver compares with the portable kernel, which runs on gemm.c.
    portable = ([str(REPO / "runtime/kernels/portable" / s) for s in ("gemm.c", "matmul.c")]
                if driver == "kai_matmul_test" else [])
    run_ok([cc, *flags, str(REPO / f"tests/c/{driver}.c"), *portable,
            str(dev / "src/device/kleidiai/kleidiai.c"),
            *map(str, sorted((dev / "src/kleidiai").glob("*.c"))), *objects,
            "-lpthread", "-lm", *(["-static"] if "aarch64" in cc else []), "-o", str(exe)])
    return exe


def case(rng: np.random.Generator, m: int, n: int, k: int, *, trans_b: int = 0,
         const: int = 1, alpha: float = 1.0, beta: float = 0.0, c_kind: int = 0,
         threads: int = 1, features: int = NEON, force: int = 1, arena: int = 4 << 20,
         calls: int = 1, block: int = 0) -> dict:
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype(np.float32)
    c = rng.uniform(-1, 1, {0: (0,), 1: (n,), 2: (m, 1), 3: (m, n)}[c_kind]).astype(np.float32)
    data = [a, b, c]
    if block:  # 4-bit weights: B as N x K rows, compared with the dequantised product
        q = quantize(b if trans_b else b.T, block)
        b = q.dequantize() if trans_b else q.dequantize().T
        data = [a, q.data.astype(np.int64), q.scales.astype(np.int64), c]
    ref = alpha * (a.astype(np.float64) @ (b.T if trans_b else b).astype(np.float64))
    if c_kind:
        ref = ref + beta * c.astype(np.float64).reshape({1: (1, n), 2: (m, 1), 3: (m, n)}[c_kind])
    head = [m, n, k, trans_b, const, alpha, beta, c_kind, threads, features, force, arena, calls,
            block]
    return {"head": head, "data": data, "ref": ref, "m": m, "n": n}


def run_cases(exe: Path, cases: list[dict], tmp: Path, prefix: list[str]) -> list[tuple]:
    lines = [str(len(cases))]
    for cs in cases:
        lines.append(" ".join(str(x) for x in cs["head"]))
        for arr in cs["data"]:
            fmt = "{:d}" if arr.dtype.kind in "iu" else "{:.9g}"
            lines.append(" ".join(fmt.format(v) for v in arr.ravel().tolist()))
    (tmp / "cases.txt").write_text("\n".join(lines) + "\n")
    proc = subprocess.run([*prefix, str(exe), str(tmp / "cases.txt"), str(tmp / "out.txt")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    words = (tmp / "out.txt").read_text().split("\n")
    results, i = [], 0
    for cs in cases:
        status, name, calls, declined, packs, tiles = words[i].split()
        y = np.array([float(v) for v in words[i + 1:i + 1 + cs["m"] * cs["n"]]])
        i += 1 + cs["m"] * cs["n"]
        results.append((int(status), name, int(calls), int(declined), int(packs), int(tiles),
                        y.reshape(cs["m"], cs["n"])))
    return results


SHAPES = [(1, 1, 1), (1, 37, 19), (23, 1, 8), (6, 8, 4), (13, 21, 7), (33, 17, 64),
          (64, 48, 32), (7, 100, 3)]


def integration_cases(rng: np.random.Generator, families: dict[str, int]) -> list[tuple]:
    """(case, expected family or None for declined, expected packs)."""
    out = []
    for fam, feat in families.items():
        for m, n, k in SHAPES:
            out.append((case(rng, m, n, k, features=feat), fam, 1))
        # Ragged tiles over three threads; a non-constant B is packed per call.
        out.append((case(rng, 29, 31, 9, threads=3, features=feat, const=0, calls=2), fam, 0))
        # alpha/beta writeback with every shape of C, and the fused-bias path.
        for c_kind in (1, 2, 3):
            out.append((case(rng, 9, 19, 11, alpha=0.5, beta=2.0, c_kind=c_kind,
                             features=feat), fam, 1))
        out.append((case(rng, 9, 19, 11, alpha=1.0, beta=1.0, c_kind=1, features=feat),
                    fam, 1))
        # A constant is packed once, whatever the number of calls.
        out.append((case(rng, 5, 12, 6, features=feat, calls=3), fam, 1))
        # transB: served for a constant (packed by the family's nxk routine, or transposed
        # and packed by its kxn one: NEON), declined for a B that changes.
        out.append((case(rng, 7, 13, 5, trans_b=1, features=feat), fam, 1))
        out.append((case(rng, 6, 9, 4, trans_b=1, features=feat, calls=2), fam, 1))
        out.append((case(rng, 7, 13, 5, trans_b=1, const=0, features=feat), None, 0))
        # An arena too small for the packed weights: declined.
        out.append((case(rng, 16, 64, 64, arena=1024, features=feat), None, 0))
    out.append((case(rng, 4, 4, 4, features=0), None, 0))  # no usable family
    return out


def q4_cases(rng: np.random.Generator, families: dict[str, int]) -> list[tuple]:
    """int4 weights: ragged shapes, M = 1, threads, alpha/beta, both B orientations."""
    out = []
    for fam, feat in families.items():
        for m, n, k, block in [(1, 37, 64, 32), (5, 4, 32, 32), (19, 23, 128, 64),
                               (33, 9, 96, 32), (1, 1, 64, 64)]:
            out.append((case(rng, m, n, k, features=feat, block=block), fam, 1))
        out.append((case(rng, 7, 13, 64, trans_b=1, features=feat, block=32, threads=2,
                         calls=2), fam, 1))
        out.append((case(rng, 9, 12, 64, alpha=0.5, beta=2.0, c_kind=3, features=feat,
                         block=32), fam, 1))
    out.append((case(rng, 4, 4, 32, features=NEON, block=32), None, 0))  # no dotprod
    return out


def check(results: list[tuple], cases: list[tuple], names: dict[str, str],
          rel_rms: float | None = None) -> None:
    """rel_rms: compare by ||y - r|| / ||r|| instead (the real int4 kernels quantise the
    activations to int8 per row, so they differ from the float product by that)."""
    for (status, name, calls, declined, packs, tiles, y), (cs, fam, want_packs) in zip(
            results, cases, strict=True):
        label = f"case {cs['head']}"
        if fam is None:
            assert status == DECLINED and declined >= 1 and calls == 0, label
            continue
        assert status == 0, f"{label}: status {status}"
        assert name == names[fam], f"{label}: ran {name}"
        assert packs == want_packs, f"{label}: packed {packs} times"
        assert tiles >= calls >= 1, f"{label}: {tiles} tiles in {calls} calls"
        if rel_rms is not None and cs["head"][13]:
            err = np.linalg.norm(y - cs["ref"]) / max(np.linalg.norm(cs["ref"]), 1e-12)
            assert err < rel_rms, f"{label}: relative RMS error {err:.3g}"
        else:
            np.testing.assert_allclose(y, cs["ref"], rtol=1e-4, atol=1e-4, err_msg=label)


REF_NAMES = {"sme2": "reference:sme2_mopa", "sme": "reference:sme_mopa",
             "neon": "reference:neon_mla", "i8mm": "reference:q4_i8mm",
             "dotprod": "reference:q4_dotprod"}
Q4_FAMILIES = {"i8mm": NEON | DOTPROD | I8MM, "dotprod": NEON | DOTPROD}
FAMILIES = {"sme2": SME2 | SME | NEON, "sme": SME | NEON, "neon": NEON | DOTPROD | I8MM}


@pytest.mark.slow
def test_integration_with_reference_ukernels_on_host(cli: Callable[..., Result],
                                                     tmp_path: Path) -> None:
    exe = build(cli, tmp_path, need_tool("gcc"))
    cases = integration_cases(np.random.default_rng(1), FAMILIES)
    cases += q4_cases(np.random.default_rng(11), Q4_FAMILIES)
    check(run_cases(exe, [c for c, _, _ in cases], tmp_path, []), cases, REF_NAMES)


@pytest.mark.slow
def test_integration_with_reference_ukernels_on_aarch64(cli: Callable[..., Result],
                                                        tmp_path: Path) -> None:
    cc = need_tool("aarch64-linux-gnu-gcc", "apt-get install gcc-aarch64-linux-gnu")
    qemu = need_tool("qemu-aarch64", "apt-get install qemu-user")
    exe = build(cli, tmp_path, cc)
    cases = integration_cases(np.random.default_rng(2), FAMILIES)
    cases += q4_cases(np.random.default_rng(12), Q4_FAMILIES)
    check(run_cases(exe, [c for c, _, _ in cases], tmp_path, [qemu, "-cpu", "max"]), cases,
          REF_NAMES)


@pytest.mark.slow
def test_matmul_serves_one_product_and_declines_batches(cli: Callable[..., Result],
                                                        tmp_path: Path) -> None:
    """tvmdev_kai_matmul_f32 reads the portable kernel's params: a product without batch
    dims runs on KleidiAI (the reference micro-kernels here) and matches the portable
    kernel; a broadcast batch is declined (the executor then runs the portable kernel)."""
    exe = build(cli, tmp_path, need_tool("gcc"), driver="kai_matmul_test")
    lines = run_ok([str(exe)]).stdout.splitlines()
    single, broadcast = (line.split() for line in lines)
    assert single[:4] == ["single", "0", "0", "0"] and float(single[4]) < 1e-5, lines
    assert broadcast[:4] == ["broadcast", str(DECLINED), "1", "0"], lines


@pytest.mark.slow
def test_feature_detection_under_qemu(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Init reads getauxval: -cpu max reports SME (reference kernels stand in), a
    Cortex-A53 only NEON."""
    cc = need_tool("aarch64-linux-gnu-gcc", "apt-get install gcc-aarch64-linux-gnu")
    qemu = need_tool("qemu-aarch64", "apt-get install qemu-user")
    exe = build(cli, tmp_path, cc)
    rng = np.random.default_rng(3)
    everything = NEON | DOTPROD | I8MM | SME | SME2
    cases = [case(rng, 9, 9, 9, features=everything, force=0)]
    (res_max,) = run_cases(exe, cases, tmp_path, [qemu, "-cpu", "max"])
    (res_a53,) = run_cases(exe, cases, tmp_path, [qemu, "-cpu", "cortex-a53"])
    assert res_max[1] == "reference:sme_mopa"  # QEMU 7.2: SME, no SME2
    assert res_a53[1] == "reference:neon_mla"
    for res in (res_max, res_a53):
        np.testing.assert_allclose(res[6], cases[0]["ref"], rtol=1e-4, atol=1e-4)


REAL_NAMES = {"sme": "kleidiai:matmul_clamp_f32_f32p2vlx1_f32p2vlx1b_2vlx2vl_sme_mopa",
              "neon": "kleidiai:matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla",
              "i8mm": "kleidiai:matmul_clamp_f32_qai8dxp4x8_qsi4c32p4x8_16x4x32_neon_i8mm",
              "dotprod": "kleidiai:matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod"}


@pytest.mark.skipif(not KLEIDIAI, reason="KLEIDIAI_SOURCE_DIR is not set: the real KleidiAI "
                    "micro-kernels cannot be built (the reference ones are tested above)")
@pytest.mark.parametrize("cpu,family,features", [
    ("max", "sme", NEON | SME),                 # SME mopa (QEMU 7.2 has no SME2)
    ("max", "neon", NEON | DOTPROD | I8MM),      # SME masked off: NEON f32
    ("cortex-a53", "neon", NEON | DOTPROD | I8MM | SME | SME2),  # the CPU lacks them
    ("max", "i8mm", NEON | DOTPROD | I8MM),      # int4: i8mm first
    ("max", "dotprod", NEON | DOTPROD),          # int4: i8mm masked off
])
@pytest.mark.slow
def test_integration_with_real_kleidiai(cpu: str, family: str, features: int,
                                        cli: Callable[..., Result], tmp_path: Path) -> None:
    cc = need_tool("aarch64-linux-gnu-gcc", "apt-get install gcc-aarch64-linux-gnu")
    qemu = need_tool("qemu-aarch64", "apt-get install qemu-user")
    exe = build(cli, tmp_path, cc, Path(str(KLEIDIAI)))
    make = q4_cases if family in ("i8mm", "dotprod") else integration_cases
    cases = [(c, fam, p) for c, fam, p in make(np.random.default_rng(4), {family: features})
             if c["head"][9] != 0 and c["head"][9] != NEON]
    for c, _, _ in cases:
        c["head"][10] = 0  # not forced: the CPU's features, limited to these
    check(run_cases(exe, [c for c, _, _ in cases], tmp_path, [qemu, "-cpu", cpu]), cases,
          REAL_NAMES, rel_rms=0.02)


# fully_connected on linux_aarch64: unplaced operators go to the KleidiAI device, which
# serves NONE, RELU, RELU6 and RELU_N1_TO_1 (the micro-kernel's clamp), with and without
# a bias (packed with the weights), batch 1 and several, keep_num_dims on a 3-D input and
# weights that are a model input (packed on every call); TANH is declined to the
# portable kernel. Each (weights, bias) constant pair is packed once.
FC_INPUTS = {"x1": (1, 40), "x5": (5, 24), "x3": (2, 3, 16), "wv": (7, 24)}
FC_CONSTANTS = {"w1": (33, 40), "b1": (33,), "w2": (17, 24), "b2": (17,), "w3": (9, 16),
                "b3": (9,)}
FC_OPS = [  # name, input, weights, bias, activation, keep_num_dims
    ("fc_a", "x1", "w1", "b1", "NONE", 0),
    ("fc_b", "x1", "w1", "b1", "RELU", 0),          # the same packed constant as fc_a
    ("fc_c", "x5", "w2", None, "RELU6", 0),
    ("fc_d", "x5", "w2", "b2", "RELU_N1_TO_1", 0),
    ("fc_e", "x5", "w2", "b2", "TANH", 0),          # declined
    ("fc_f", "x3", "w3", "b3", "RELU", 1),          # [2, 3, 16] -> [2, 3, 9]
    ("fc_g", "x3", "w3", None, "NONE", 0),          # [2, 3, 16] -> [6, 9]
    ("fc_h", "x5", "wv", None, "RELU6", 0),         # weights given at run time
]
FC_SERVED, FC_DECLINED, FC_PACKS = 7, 1, 5  # packs: (w1,b1) (w2,-) (w2,b2) (w3,b3) (w3,-)
ACTS = {"NONE": (-np.inf, np.inf), "RELU": (0.0, np.inf), "RELU6": (0.0, 6.0),
        "RELU_N1_TO_1": (-1.0, 1.0)}


def fc_model(tmp: Path) -> tuple[Path, Path, dict[str, np.ndarray]]:
    """The model file, its inputs folder, and every input and constant by name."""
    rng = np.random.default_rng(21)
    arrays = {n: rng.uniform(-3, 3, s).astype(np.float32) for n, s in FC_INPUTS.items()}
    arrays.update({n: rng.uniform(-1, 1, s).astype(np.float32)
                   for n, s in FC_CONSTANTS.items()})
    (tmp / "in").mkdir()
    for n, a in arrays.items():
        np.save(tmp / ("in" if n in FC_INPUTS else ".") / f"{n}.npy", a)
    lines = ["name: fcs", "inputs:"]
    lines += [f"  {n}: {{shape: {list(s)}, dtype: float32}}" for n, s in FC_INPUTS.items()]
    lines += ["outputs:"]
    lines += [f"  y_{name}: {{shape: {list(fc_expected(arrays, op).shape)}, dtype: float32}}"
              for op in FC_OPS for name in [op[0]]]
    lines += ["constants:"]
    lines += [f"  {n}: {{shape: {list(s)}, dtype: float32, npy: {n}.npy}}"
              for n, s in FC_CONSTANTS.items()]
    lines += ["operators:"]
    for name, x, w, b, act, keep in FC_OPS:
        ins = ", ".join([x, w] + ([b] if b else []))
        lines.append(f"  - {{name: {name}, op: fully_connected, inputs: [{ins}], "
                     f"outputs: [y_{name}], attrs: {{activation: {act}, keep_num_dims: {keep}}}}}")
    path = tmp / "fcs.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path, tmp / "in", arrays


def fc_expected(arrays: dict[str, np.ndarray], op: tuple) -> np.ndarray:
    """TFLite FULLY_CONNECTED in float64 numpy."""
    _, x, w, b, act, keep = op
    xs, ws = arrays[x].astype(np.float64), arrays[w].astype(np.float64)
    y = xs.reshape(-1, ws.shape[1]) @ ws.T + (arrays[b].astype(np.float64) if b else 0.0)
    y = np.tanh(y) if act == "TANH" else np.clip(y, *ACTS[act])
    return y.reshape(*xs.shape[:-1], ws.shape[0]) if keep else y


@pytest.mark.slow
@pytest.mark.parametrize("cpu,micro", [("max", "reference"), ("max", "kleidiai"),
                                       ("cortex-a53", "kleidiai")])
def test_fully_connected_on_linux_aarch64(cpu: str, micro: str, cli: Callable[..., Result],
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """-cpu max runs the SME family (nxk packing of the [out, in] weights); a Cortex-A53
    the NEON one, whose kxn packing gets the weights transposed first."""
    need_tool("aarch64-linux-gnu-gcc", "apt-get install gcc-aarch64-linux-gnu")
    need_tool("qemu-aarch64", "apt-get install qemu-user")
    if micro == "kleidiai" and not KLEIDIAI:
        pytest.skip("KLEIDIAI_SOURCE_DIR is not set: the real KleidiAI micro-kernels cannot "
                    "be built (the reference ones run in the 'reference' case)")
    if micro == "reference":
        monkeypatch.delenv("KLEIDIAI_SOURCE_DIR", raising=False)
    path, inputs, arrays = fc_model(tmp_path)
    r = cli("run", str(path), "--board", "linux_aarch64", "--cpu", cpu, "--inputs",
            str(inputs), "--save-outputs", str(tmp_path / "out"), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    plan = json.loads((tmp_path / "b/model/tvmgen_fcs_plan.json").read_text())
    fcs = [o for o in plan["operators"] if o["op"] == "fully_connected"]
    assert len(fcs) == len(FC_OPS)
    for o in fcs:
        assert o["device"] == "cpu", o
        assert o["kernels"] == ["tvmdev_kai_fully_connected_f32", "tvmk_fully_connected_f32"]
    # What the device served, as the harness counted it (tvmdev_kai_stats).
    family = "sme_mopa" if cpu == "max" else "neon_mla"
    line = next(x for x in r.out.splitlines() if x.startswith("device cpu (kleidiai)"))
    assert (f"{FC_SERVED} calls served (the last on {micro}:" in line and family in line
            and f"{FC_DECLINED} declined" in line and f"{FC_PACKS} constants packed" in line
            ), line
    for op in FC_OPS:
        got = np.load(tmp_path / "out" / f"y_{op[0]}.npy")
        want = fc_expected(arrays, op)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=op[0])
        # The values reach past each bound of the clamp, so a clamp not applied shows.
        pre = fc_expected(arrays, (*op[:4], "NONE", op[5]))
        lo, hi = ACTS.get(op[4], (-np.inf, np.inf))
        assert pre.min() < lo or lo == -np.inf, op[0]
        assert pre.max() > hi or hi == np.inf, op[0]
