"""The Metal platform and the built-in Metal GEMM, checked on any host (nothing here runs
Metal): golden files, the load-bearing details of the host code and the kernels, the
dispatch rule (Python and its C mirror), a model of both kernels' tiling, the C header
as plain C, and the parts that build without Apple's SDK.

Building and running the Objective-C and the MSL is the macOS workflow's job
(.github/workflows/macos.yml).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import metal_tiling as tiling
import pytest
import yaml
from conftest import GOLDENS, REPO, Result, need_tool, run_ok

from tvmdev.errors import TvmdevError
from tvmdev.load.board import board_by_name, load_board
from tvmdev.load.library import load_library
from tvmdev.plan import metal
from tvmdev.plan.kernels import build_registry
from tvmdev.plan.metal import GemmKernel
from tvmdev.render import metal as metalgen

LIBRARY = REPO / "runtime/metal"
PORTABLE = REPO / "runtime/kernels/portable"
WARN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def _device(cli: Callable[..., Result], tmp: Path, name: str = "gpu") -> Path:
    out = tmp / name
    r = cli("new-device", name, "--platform", "metal", "-o", str(out))
    assert r.code == 0, r.err
    return out


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _host() -> str:
    return _read(LIBRARY / "tvmk_metal_gemm.m")


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _functions(text: str) -> dict[str, tuple[int, int]]:
    """Function definitions of a C or Objective-C file (body on lines of its own, as
    these files write them): name -> (start of the header, end of the body)."""
    found = {}
    for m in re.finditer(r"^(?:static )?[^\n;#=]*?\b(\w+)\((?:[^;{}])*?\)\s*\n\{", text,
                         re.M):
        depth, i = 0, m.end() - 1
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        found[m.group(1)] = (m.start(), i + 1)
    return found


def _body(text: str, name: str) -> str:
    start, end = _functions(text)[name]
    return text[start:end]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _in_order(text: str, *needles: str) -> None:
    """Each needle occurs in text after the one before it (whitespace runs count as
    one space)."""
    text, at = _flat(text), 0
    for needle in map(_flat, needles):
        found = text.find(needle, at)
        assert found >= 0, f"{needle!r} does not follow {text[:at][-80:]!r}"
        at = found + len(needle)


def _status_include(tmp: Path) -> Path:
    """An include folder holding tvm/device/status.h."""
    from tvmdev.model import status
    from tvmdev.render.engine import banner, render

    include = tmp / "include"
    (include / "tvm/device").mkdir(parents=True)
    (include / "tvm/device/status.h").write_text(render(
        "status.h.j2", banner=banner("c", "tests/test_metal.py", "owned"),
        api_version=status.API_VERSION, statuses=status.STATUSES))
    return include


def _msl_enum(path: Path) -> dict[str, int]:
    block = re.search(r"enum : \w+ \{(.*?)\};", _read(path), re.S)
    assert block is not None
    return {k: int(v) for k, v in re.findall(r"(\w+) = (\d+),", block.group(1))}


# --- the generated device ------------------------------------------------------------

def test_list_platforms_shows_metal(cli: Callable[..., Result]) -> None:
    r = cli("list", "platforms")
    line = next(ln for ln in r.out.splitlines() if ln.split()[0] == "metal")
    assert "Metal" in line and "macOS" in line


def test_header_is_plain_c(cli: Callable[..., Result], tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    out = _device(cli, tmp_path)
    header = out / "include/tvm/device/gpu/metal.h"
    text = _read(header)
    assert "id<" not in text and "@" not in text and "#import" not in text
    assert re.findall(r"#include ([<\"][^>\"]+[>\"])", text) == [
        "<pthread.h>", "<stdint.h>", '"tvm/device/gpu.h"', '"tvm/device/gpu/metal_user.h"']
    user_h = _read(out / "include/tvm/device/gpu/metal_user.h")  # the user's fields: plain C too
    assert "id<" not in user_h and "@" not in user_h and "#import" not in user_h
    assert "#if TVM_DEVICE_GPU_API_VERSION != 1\n#error" in text
    struct = re.search(r"struct tvm_device_gpu \{(.*?)\n\};", text, re.S)
    assert struct is not None
    opaque = re.findall(r"^\s+void \*(\w+);", struct.group(1), re.M)
    assert opaque == ["device", "event", "residency_set", "queue", "allocator",
                      "command_buffer", "kernel_state"]
    assert "uint64_t signal_value;" in struct.group(1)
    assert "int32_t TVMDeviceGpuInit(tvm_device_gpu_t *tvm_dev, void *mtl_device);" in text
    assert "int32_t TVMDeviceGpuDestroy(tvm_device_gpu_t *tvm_dev);" in text
    run_ok([gcc, *WARN, "-fsyntax-only", "-x", "c", f"-I{out}/include", str(header)])
    # Used from C, as the executor and the application use it.
    user = tmp_path / "user.c"
    user.write_text('#include "tvm/device/gpu/metal.h"\n'
                    "int main(void)\n{\n    tvm_device_gpu_t dev;\n\n"
                    "    return TVMDeviceGpuInit(&dev, (void *)0) == TVM_DEVICE_OK ? 0 : 1;\n"
                    "}\n")
    run_ok([gcc, *WARN, "-fsyntax-only", f"-I{out}/include", str(user)])


def test_device_follows_the_metal_hal_mapping(cli: Callable[..., Result],
                                              tmp_path: Path) -> None:
    src = _read(_device(cli, tmp_path) / "src/device/gpu/metal.m")
    init = _body(src, "TVMDeviceGpuInit")
    _in_order(init, "MTLCreateSystemDefaultDevice()", "if (device == nil) {",
              "return TVM_DEVICE_ERR_NOT_READY;", "newSharedEvent")
    assert "[(id<MTLDevice>)mtl_device retain]" in init
    # Activate: the queue and the residency set, the set on the queue.
    _in_order(_body(src, "TVMDeviceGpuActivate"), "if (tvm_dev->active == 0)",
              "start_queue(tvm_dev)")
    _in_order(_body(src, "start_queue"), "make_residency_set(tvm_dev)", "start_queue_metal4",
              "newCommandQueue", "addResidencySet:")
    _in_order(_body(src, "start_queue_metal4"), "newMTL4CommandQueue", "newCommandAllocator",
              "addResidencySet:")
    assert "newResidencySetWithDescriptor:desc error:&err" in _body(src, "make_residency_set")
    # Open begins a command buffer; Close commits it and waits.
    _in_order(_body(src, "TVMDeviceGpuOpen"), "pthread_mutex_lock(&tvm_dev->lock)",
              "begin_command_buffer(tvm_dev)")
    _in_order(_body(src, "begin_metal4"), "newCommandBuffer", "[allocator reset]",
              "beginCommandBufferWithAllocator:allocator")
    _in_order(_body(src, "TVMDeviceGpuClose"), "commit_and_wait(tvm_dev)",
              "pthread_mutex_unlock(&tvm_dev->lock)")
    # Deactivate releases the queue; Destroy everything else.
    _in_order(_body(src, "TVMDeviceGpuDeactivate"), "tvm_dev->active--", "stop_queue(tvm_dev)")
    assert "[(id<NSObject>)tvm_dev->queue release];" in _body(src, "stop_queue")
    _in_order(_body(src, "TVMDeviceGpuDestroy"), "kernel_state_release(tvm_dev->kernel_state)",
              "residency_set release]", "event release]", "device release]")


def test_close_waits_on_the_shared_event_with_a_timeout(cli: Callable[..., Result],
                                                        tmp_path: Path) -> None:
    src = _read(_device(cli, tmp_path) / "src/device/gpu/metal.m")
    assert "waitUntilCompleted" not in _strip_comments(src)
    _in_order(_body(src, "wait_for"),
              "waitUntilSignaledValue:value timeoutMS:TVM_DEVICE_GPU_TIMEOUT_MS",
              "return TVM_DEVICE_ERR_TIMEOUT;")
    # Metal 4: the queue signals the event after the commit.
    _in_order(_body(src, "commit_and_wait_metal4"), "endCommandBuffer", "[queue commit:",
              "[queue signalEvent:", "wait_for(tvm_dev, value)")
    # Metal 3: the command buffer signals it, after the work encoded before the signal.
    _in_order(_body(src, "commit_and_wait"), "encodeSignalEvent:", "value:value",
              "[command_buffer commit]", "wait_for(tvm_dev, value)")
    # The residency set is on the queue (Activate) before anything is committed (Close).
    _in_order(src, "addResidencySet:", "int32_t TVMDeviceGpuActivate(",
              "int32_t TVMDeviceGpuClose(")
    header = _read(tmp_path / "gpu/include/tvm/device/gpu/metal.h")
    assert "#define TVM_DEVICE_GPU_TIMEOUT_MS 30000" in header


# --- no ARC, Metal 4 guarded ---------------------------------------------------------

def _objc_sources(cli: Callable[..., Result], tmp: Path) -> dict[str, str]:
    device = _read(_device(cli, tmp) / "src/device/gpu/metal.m")
    return {"device metal.m": device, "tvmk_metal_gemm.m": _host()}


def test_manual_retain_release(cli: Callable[..., Result], tmp_path: Path) -> None:
    for name, src in _objc_sources(cli, tmp_path).items():
        assert re.search(r"#if __has_feature\(objc_arc\)\n#error \"[^\"]*-fno-objc-arc\"\n"
                         r"#endif", src), name
        assert "__bridge" not in src and "release]" in src, name
    cmake = _read(tmp_path / "gpu/CMakeLists.txt")
    assert "target_compile_options(tvm_device_gpu_metal PRIVATE -fno-objc-arc)" in cmake
    assert "-fno-objc-arc" in _read(REPO / "boards/apple_m5_max.yaml")


def test_metal4_code_is_guarded(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Metal 4 names appear only in code compiled when the SDK declares them (the SDK
    guard), and the functions using them are annotated for macOS 26 and called under
    @available (or from one another), so the files build with older SDKs and run on
    older systems."""
    for name, src in _objc_sources(cli, tmp_path).items():
        guard = "TVMDEV_METAL4" if "TVMDEV_METAL4" in src else "TVMK_METAL4"
        assert re.search(rf"#if defined\(__MAC_26_0\) && __MAC_OS_X_VERSION_MAX_ALLOWED >= "
                         rf"__MAC_26_0 && \\\n    __has_include\(<Metal/MTL4CommandQueue\.h>\)"
                         rf"\n#define {guard} 1\n#else\n#define {guard} 0\n#endif", src), name
        code = _strip_comments(src).replace("\\\n", " ")
        stack: list[str] = []
        for number, line in enumerate(code.splitlines(), 1):
            directive = line.strip()
            if directive.startswith("#if"):
                stack.append(directive)
            elif directive.startswith("#else"):
                stack[-1] = "!" + stack[-1]
            elif directive.startswith("#endif"):
                stack.pop()
            elif "MTL4" in line and not directive.startswith("#"):
                assert f"#if {guard}" in stack, f"{name}:{number}: {line.strip()}"
        annotated = set(re.findall(r"(\w+)\([^;#{}]*?\)\s*API_AVAILABLE\(macos\(26\.0\)\);",
                                   code, re.S))
        assert annotated, name
        spans = _functions(code)
        for fn in annotated:
            start = spans[fn][0]
            header_end = code.index("{", start)
            for call in re.finditer(rf"\b{fn}\(", code):
                at = call.start()
                rest = code[at:code.index(";", at)]
                if start <= at < header_end or ("API_AVAILABLE" in rest and "{" not in rest):
                    continue  # its definition or its prototype
                caller = next(n for n, (s, e) in spans.items() if s < at < e)
                if caller in annotated:
                    continue
                avail = code.rfind("if (@available(macOS 26.0, *)) {", spans[caller][0], at)
                assert avail >= 0, f"{name}: {caller} calls {fn} without @available"
                between = code[avail:at]
                assert between.count("{") > between.count("}"), (
                    f"{name}: {caller} calls {fn} outside its @available block")


# --- the host code's load-bearing details --------------------------------------------

def test_cooperative_tensor_pipelines_come_from_mtl4_compiler() -> None:
    src = _host()
    pipeline = _body(src, "pipeline_metal4")
    _in_order(pipeline, "[[MTL4LibraryFunctionDescriptor alloc] init]",
              "[[MTL4ComputePipelineDescriptor alloc] init]",
              "desc.computeFunctionDescriptor = function;",
              "desc.requiredThreadsPerThreadgroup = MTLSizeMake(TVMK_METAL_THREADS, 1, 1);",
              "[compiler newComputePipelineStateWithDescriptor:desc")
    setup = _body(src, "setup_metal4")
    _in_order(setup, "newCompilerWithDescriptor:", "s->matmul2d = pipeline_metal4(s->compiler, "
              "matmul2d_library, @\"tvmk_metal_gemm_matmul2d_f32\"")
    # The legacy path builds the Metal 3 kernel only, never the cooperative-tensor one.
    assert _strip_comments(src).count("newComputePipelineStateWithFunction:") == 1
    assert "newComputePipelineStateWithFunction:" in _body(src, "setup_metal3")
    assert "matmul2d" not in _body(src, "setup_metal3")
    # 128 = the kernel's execution_simdgroups<SIMDGROUPS> x 32 = the dispatches' size.
    assert "#define TVMK_METAL_THREADS 128" in _read(LIBRARY / "tvmk_metal.h")
    mm = _msl_enum(LIBRARY / "gemm_matmul2d.metal")
    assert mm["SIMDGROUPS"] * metal.SIMD_WIDTH == metal.THREADS_PER_THREADGROUP == 128
    assert "execution_simdgroups<SIMDGROUPS>" in _read(LIBRARY / "gemm_matmul2d.metal")
    assert src.count("threadsPerThreadgroup:MTLSizeMake(TVMK_METAL_THREADS, 1, 1)") == 2


def test_tensor_extents_are_innermost_first() -> None:
    src = _host()
    tensor = _body(src, "matrix_tensor")
    assert "const NSInteger extent_values[2] = {inner, outer};" in tensor
    assert "const NSInteger stride_values[2] = {1, inner};" in tensor
    run = _body(src, "run_metal4")
    # A is M x K: extents (K, M), strides (1, K); B (N, K); D (N, M).
    assert "matrix_tensor(s->a, k, m, &err)" in run
    assert "matrix_tensor(s->b, n, k, &err)" in run
    assert "matrix_tensor(s->d, n, m, &err)" in run
    msl = _read(LIBRARY / "gemm_matmul2d.metal")
    assert "A.template slice<dynamic_length_v<int32_t>, TILE_M>(0, row)" in msl
    assert "B.template slice<TILE_N, dynamic_length_v<int32_t>>(col, 0)" in msl
    assert "D.template slice<TILE_N, TILE_M>(col, row)" in msl
    assert "const int32_t row = int32_t(group.y) * TILE_M;" in msl
    assert "const int32_t col = int32_t(group.x) * TILE_N;" in msl


def test_residency_set_is_on_the_queue_before_the_commit() -> None:
    run = _body(_host(), "run_metal4")
    _in_order(run, "[residency addAllocation:tensors[i]]", "[command_buffer endCommandBuffer]",
              "[residency commit]", "[queue addResidencySet:residency]",
              "[queue commit:&command_buffer count:1]", "[queue signalEvent:event value:value]",
              "waitUntilSignaledValue:value timeoutMS:TVM_DEVICE_METAL_TIMEOUT_MS",
              "[queue removeResidencySet:residency]")
    # The staging buffers join the set when they are made.
    _in_order(_body(_host(), "ensure_buffer"), "newBufferWithLength:bytes",
              "[residency addAllocation:fresh]")


def test_threadgroup_memory_is_set_for_the_threadgroup_parameter() -> None:
    src = _host()
    assert "threadgroup uchar *scratch [[threadgroup(0)]]" in _read(
        LIBRARY / "gemm_simdgroup.metal")
    assert "[[threadgroup(" not in _read(LIBRARY / "gemm_matmul2d.metal")
    call = ("setThreadgroupMemoryLength:tvmk_metal_simdgroup_threadgroup_bytes(sizeof(float)) "
            "atIndex:0];")
    for fn in ("run_metal3", "run_metal4"):
        _in_order(_body(src, fn), "setComputePipelineState:s->simdgroup", call,
                  "dispatchThreadgroups:")
    # The size the host sets is what the kernel's tiles take: A and B, then float D.
    sg = _msl_enum(LIBRARY / "gemm_simdgroup.metal")
    want = (sg["TILE_M"] * sg["TILE_K"] + sg["TILE_K"] * sg["TILE_N"]) * 4 + \
        sg["TILE_M"] * sg["TILE_N"] * 4
    assert metal.simdgroup_threadgroup_bytes(4) == want == 8192
    assert metal.simdgroup_threadgroup_bytes(2) == 6144


def test_k_is_a_dynamic_extent() -> None:
    msl = _read(LIBRARY / "gemm_matmul2d.metal")
    assert ("constexpr auto desc = matmul2d_descriptor(TILE_M, TILE_N, "
            "dynamic_length_v<int32_t>);") in msl
    assert "using matrix = tensor<device T, dextents<int32_t, 2>>;" in msl
    # One pipeline for every K: K reaches the kernel through the tensors' extents only.
    assert re.search(r"\bk\b", _body(_host(), "setup_metal4")) is None
    simdgroup = _read(LIBRARY / "gemm_simdgroup.metal")
    assert "for (uint k0 = 0; k0 < dims.k; k0 += TILE_K)" in simdgroup


def test_host_declines_without_a_device_and_maps_timeouts() -> None:
    src = _host()
    entry = _body(src, "tvmk_metal_gemm_f32")
    _in_order(entry, "tvmk_metal_gemm_choose(m, has_device, has_device && dev->metal4,",
              "TVMK_METAL_CROSSOVER_M);", "if (kernel == TVMK_METAL_GEMM_PORTABLE) {",
              "return TVM_DEVICE_DECLINED;", "params->trans_a || params->trans_b",
              "return TVM_DEVICE_DECLINED;")
    for fn in ("run_metal3", "run_metal4"):
        _in_order(_body(src, fn), "waitUntilSignaledValue:value timeoutMS:"
                  "TVM_DEVICE_METAL_TIMEOUT_MS", "return TVM_DEVICE_ERR_TIMEOUT;")
    _in_order(_body(src, "run_metal3"), "encodeSignalEvent:event value:value",
              "[command_buffer commit]")
    assert "waitUntilCompleted" not in _strip_comments(src)


# --- the dispatch rule ---------------------------------------------------------------

RULE = [  # M, device, Metal 4, crossover, kernel
    (399, True, True, 400, GemmKernel.SIMDGROUP_MATRIX),   # below the crossover
    (400, True, True, 400, GemmKernel.MATMUL2D),           # exactly at it
    (401, True, True, 400, GemmKernel.MATMUL2D),           # above it
    (4096, True, True, 400, GemmKernel.MATMUL2D),
    (1, True, True, 400, GemmKernel.SIMDGROUP_MATRIX),     # decode
    (4096, True, False, 400, GemmKernel.SIMDGROUP_MATRIX),  # no MTLGPUFamilyMetal4
    (4096, True, True, None, GemmKernel.SIMDGROUP_MATRIX),  # no crossover measured
    (1, True, True, 1, GemmKernel.MATMUL2D),
    (4096, False, True, 400, GemmKernel.PORTABLE),         # no Metal device
    (1, False, False, None, GemmKernel.PORTABLE),
]


@pytest.mark.parametrize("m,device,metal4,crossover,want", RULE)
def test_dispatch_rule(m: int, device: bool, metal4: bool, crossover: int | None,
                       want: GemmKernel) -> None:
    assert metal.choose_gemm_kernel(m, has_device=device, supports_metal4=metal4,
                                    crossover_m=crossover) is want


@pytest.fixture(scope="module")
def rules_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gcc = need_tool("gcc")
    tmp = tmp_path_factory.mktemp("metal_rules")
    include = _status_include(tmp)
    exe = tmp / "metal_rules"
    run_ok([gcc, *WARN, f"-I{include}", f"-I{PORTABLE}", f"-I{LIBRARY}",
            str(REPO / "tests/c/metal_rules.c"), "-o", str(exe)])
    return exe


def _ask(program: Path, questions: list[str]) -> list[str]:
    proc = subprocess.run([str(program)], input="\n".join(questions) + "\n",
                          capture_output=True, text=True, timeout=60, check=True)
    return proc.stdout.splitlines()


def test_host_code_states_the_same_rule(rules_program: Path) -> None:
    questions, want = [], []
    for m in (-1, 0, 1, 2, 63, 64, 255, 256, 398, 399, 400, 401, 511, 512, 1024, 1 << 20):
        for device in (False, True):
            for metal4 in (False, True):
                for crossover in (None, 1, 64, 400, 512):
                    questions.append(f"choose {m} {int(device)} {int(metal4)} "
                                     f"{-1 if crossover is None else crossover}")
                    want.append(str(metal.choose_gemm_kernel(
                        m, has_device=device, supports_metal4=metal4,
                        crossover_m=crossover).value))
    assert _ask(rules_program, questions) == want


def test_host_code_computes_the_same_grids(rules_program: Path) -> None:
    shapes = [(1, 1), (1, 2048), (2048, 1), (7, 129), (32, 32), (33, 31), (64, 32),
              (65, 33), (400, 300), (1024, 2048), (2**31 - 1, 2**31 - 1)]
    questions, want = [], []
    for kernel in (GemmKernel.SIMDGROUP_MATRIX, GemmKernel.MATMUL2D):
        for m, n in shapes:
            questions.append(f"grid {kernel.value} {m} {n}")
            want.append("{} {}".format(*metal.gemm_grid(kernel, m, n)))
    questions += ["tgbytes 4", "tgbytes 2", "constants"]
    want += [str(metal.simdgroup_threadgroup_bytes(4)), str(metal.simdgroup_threadgroup_bytes(2))]
    sg, mm = metal.SIMDGROUP_TILING, metal.MATMUL2D_TILING
    want.append(f"{metal.THREADS_PER_THREADGROUP} {sg.tile_m} {sg.tile_n} {sg.tile_k} "
                f"{mm.tile_m} {mm.tile_n}")
    assert _ask(rules_program, questions) == want


def test_crossover_comes_from_the_board(tmp_path: Path) -> None:
    board = board_by_name("apple_m5_max")
    assert board.platform == "metal" and board.toolchain.cc == "clang"
    assert (board.run.method, board.run.requires, board.run.timeout) == ("native", "macos", 120)
    assert metal.crossover_m(board) == 400
    assert metal.crossover_m(board_by_name("host")) is None
    text = _read(REPO / "boards/apple_m5_max.yaml")
    for m, ratio in ((64, "0.26x"), (256, "0.74x"), (512, "1.16x"), (1024, "1.61x")):
        assert re.search(rf"M = +{m}: {re.escape(ratio)}", text), m
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("metal_crossover_m: 400", "metal_crossover_m: -3"))
    line = bad.read_text().splitlines().index("    metal_crossover_m: -3") + 1
    with pytest.raises(TvmdevError) as err:
        load_board(bad)
    assert str(err.value) == (f"{bad}:{line}: offload.gemm.metal_crossover_m must be at "
                              "least 1, not -3")


# --- the tiling model ----------------------------------------------------------------

SHAPES = [(1, 1), (1, 7), (1, 2048), (7, 1), (2048, 1), (5, 3), (33, 17), (63, 65),
          (64, 32), (65, 33), (399, 401), (400, 300), (1000, 1), (1024, 2048)]


@pytest.mark.parametrize("m,n", SHAPES)
def test_every_element_is_written_once(m: int, n: int) -> None:
    for writes in (tiling.simdgroup_matrix_writes(m, n), tiling.matmul2d_writes(m, n)):
        cov = tiling.coverage(m, n, writes)
        assert cov.exact, cov


def test_model_constants_are_the_kernels() -> None:
    sg = _msl_enum(LIBRARY / "gemm_simdgroup.metal")
    tiling = metal.SIMDGROUP_TILING
    assert (sg["TILE_M"], sg["TILE_N"], sg["TILE_K"]) == (tiling.tile_m, tiling.tile_n,
                                                          tiling.tile_k)
    assert (sg["SIMDGROUP_ROWS"], sg["SIMDGROUP_COLS"]) == (tiling.simdgroup_rows,
                                                            tiling.simdgroup_cols)
    assert sg["THREADS"] == tiling.simdgroup_rows * tiling.simdgroup_cols * metal.SIMD_WIDTH
    assert sg["FRAG"] == metal.FRAGMENT and tiling.sub_m % metal.FRAGMENT == 0
    msl = _read(LIBRARY / "gemm_simdgroup.metal")
    assert "const uint sub_row = (sg / SIMDGROUP_COLS) * SUB_M;" in msl
    assert "const uint sub_col = (sg % SIMDGROUP_COLS) * SUB_N;" in msl
    assert "if (r < dims.m && c < dims.n) {\n            D[r * dims.n + c] = d_tile[e];" in msl
    mm = _msl_enum(LIBRARY / "gemm_matmul2d.metal")
    assert (mm["TILE_M"], mm["TILE_N"], mm["SIMDGROUPS"]) == (
        metal.MATMUL2D_TILING.tile_m, metal.MATMUL2D_TILING.tile_n,
        metal.MATMUL2D_TILING.simdgroups)
    # matmul2d with execution_simdgroups: tile sides multiples of 8, one of them of 16.
    assert mm["TILE_M"] % 8 == 0 and mm["TILE_N"] % 8 == 0
    assert mm["TILE_M"] % 16 == 0 or mm["TILE_N"] % 16 == 0


def test_model_enumerates_each_writer() -> None:
    writes = tiling.simdgroup_matrix_writes(33, 17)
    assert len(writes) == 1 * 2 * 4  # one threadgroup along N, two along M, 4 simdgroups
    first = writes[0]
    assert (first.threadgroup, first.simdgroup) == ((0, 0), 0)
    assert set(first.elements()) == {(r, c) for r in range(16) for c in range(16)}
    corner = next(w for w in writes if w.threadgroup == (0, 1) and w.simdgroup == 0)
    assert set(corner.elements()) == {(32, c) for c in range(16)}
    assert not list(next(w for w in writes if w.threadgroup == (0, 1)
                         and w.simdgroup == 3).elements())
    decode = tiling.matmul2d_writes(1, 100)
    assert [w.threadgroup for w in decode] == [(0, 0), (1, 0), (2, 0), (3, 0)]
    assert set(decode[3].elements()) == {(0, c) for c in range(96, 100)}


@pytest.mark.parametrize("m,n", [(33, 17), (100, 70), (1, 2048), (129, 1)])
def test_model_detects_wrong_grids(m: int, n: int) -> None:
    # Rounding the grid down leaves the ragged edge unwritten.
    floor = (n // 32, m // 32)
    cov = tiling.coverage(m, n, tiling.simdgroup_matrix_writes(m, n, grid=floor))
    assert cov.missing > 0 and not cov.exact
    # The grid of the other kernel's tiles misses rows of this one's.
    if m > 32:
        wrong = metal.gemm_grid(GemmKernel.MATMUL2D, m, n)
        assert tiling.coverage(m, n, tiling.simdgroup_matrix_writes(m, n, grid=wrong)).missing
    # Swapping the grid's axes misses the longer side.
    grid = metal.gemm_grid(GemmKernel.MATMUL2D, m, n)
    cov = tiling.coverage(m, n, tiling.matmul2d_writes(m, n, grid=(grid[1], grid[0])))
    assert grid[0] == grid[1] or cov.missing > 0
    # A dispatch encoded twice writes every element twice.
    twice = tiling.matmul2d_writes(m, n) * 2
    assert tiling.coverage(m, n, twice).repeated == m * n


@pytest.mark.parametrize("m,n", [(33, 17), (5, 3), (100, 70), (64, 64)])
def test_model_detects_the_documented_bugs(m: int, n: int) -> None:
    # simdgroup_store straight to D: whole 8 x 8 fragments past the edges.
    # Aligned shapes hide it, as a single-tile test would.
    unchecked = metal.SimdgroupTiling(bounds_checked=False)
    cov = tiling.coverage(m, n, tiling.simdgroup_matrix_writes(m, n, unchecked))
    assert cov.exact == (m % 32 == 0 and n % 32 == 0)
    if n % 32:
        assert cov.outside > 0 and cov.repeated > 0  # a ragged row spills into the next
    # Tensor extents read the NumPy way round: elements land at other elements' places.
    numpy_way = metal.Matmul2dTiling(extents_innermost_first=False)
    cov = tiling.coverage(m, n, tiling.matmul2d_writes(m, n, numpy_way))
    assert cov.misplaced > 0 and not cov.exact


# --- the kernel library --------------------------------------------------------------

def test_kernel_library_config_golden(update_goldens: bool) -> None:
    """The one rendered file of the library (the board's crossover and the embedded MSL)
    against its golden; the other files are runtime/metal's, copied as they are."""
    files = {f.path: f.content for f in metalgen.library_files(board_by_name("apple_m5_max"))}
    assert sorted(files) == sorted([*metalgen.COPIED, "tvmk_metal_config.h"])
    golden = GOLDENS / "metal/tvmk_metal_config.h"
    if update_goldens:
        golden.write_text(files["tvmk_metal_config.h"], encoding="utf-8")
    assert files["tvmk_metal_config.h"] == golden.read_text(encoding="utf-8"), \
        "tvmk_metal_config.h differs from its golden (refresh with --update-goldens)"
    assert "#define TVMK_METAL_CROSSOVER_M 400\n" in files["tvmk_metal_config.h"]
    host = metalgen.library_files(board_by_name("host"))[-1].content
    assert "#define TVMK_METAL_CROSSOVER_M TVMK_METAL_NO_CROSSOVER\n" in host


def test_embedded_msl_is_the_kernels_byte_for_byte(tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    for f in metalgen.library_files(board_by_name("apple_m5_max")):
        (tmp_path / f.path).write_text(f.content, encoding="utf-8")
    main = tmp_path / "dump.c"
    main.write_text('#include <stdio.h>\n#include "tvmk_metal_config.h"\n\n'
                    "static void dump(const char *const *lines)\n{\n"
                    "    for (; *lines != NULL; ++lines) {\n        fputs(*lines, stdout);\n"
                    "    }\n}\n\nint main(void)\n{\n    dump(tvmk_metal_simdgroup_msl);\n"
                    "    dump(tvmk_metal_matmul2d_msl);\n    return 0;\n}\n")
    run_ok([gcc, *WARN, f"-I{tmp_path}", str(main), "-o", str(tmp_path / "dump")])
    out = run_ok([str(tmp_path / "dump")]).stdout
    assert out == _read(LIBRARY / "gemm_simdgroup.metal") + _read(
        LIBRARY / "gemm_matmul2d.metal")


def test_kernel_library_serves_metal_devices_then_falls_back() -> None:
    lib = load_library(LIBRARY / "kernels.yaml", "device", "metal", kind="metal")
    [kernel] = lib.kernels
    assert (kernel.op, kernel.name, kernel.header) == ("gemm", "tvmk_metal_gemm_f32",
                                                       "tvmk_metal.h")
    assert kernel.sources == ((LIBRARY / "tvmk_metal_gemm.m").resolve(),)
    registry = build_registry([], [lib])
    dtypes = {"A": "float32", "B": "float32", "C": "float32", "Y": "float32"}
    assert [k.name for k in registry.chain("gemm", dtypes, "metal")] == [
        "tvmk_metal_gemm_f32", "tvmk_gemm_f32"]
    assert [k.name for k in registry.chain("gemm", dtypes, "woofles")] == ["tvmk_gemm_f32"]
    assert "int32_t tvmk_metal_gemm_f32(const float *A, const float *B, const float *C, " \
           "float *Y,\n" in _read(LIBRARY / "tvmk_metal.h")


def test_kernel_header_is_plain_c(tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    include = _status_include(tmp_path)
    run_ok([gcc, *WARN, "-fsyntax-only", "-x", "c", f"-I{include}",
            f"-I{PORTABLE}", str(LIBRARY / "tvmk_metal.h")])


def test_macos_smoke_test_compiles_as_c(cli: Callable[..., Result], tmp_path: Path) -> None:
    """tests/c/metal_smoke.c runs on a Mac only; it is compiled here so that it cannot rot
    against the generated header and tvmk_metal.h."""
    gcc = need_tool("gcc")
    out = _device(cli, tmp_path, "metal")
    run_ok([gcc, *WARN, "-fsyntax-only", f"-I{out}/include", f"-I{LIBRARY}", f"-I{PORTABLE}",
            str(REPO / "tests/c/metal_smoke.c")])


# --- builds without Apple's SDK ------------------------------------------------------

def test_cmakelists_builds_metal_only_on_apple(cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    """The CMakeLists guards metal (the slow lane configures it with CMake)."""
    out = _device(cli, tmp_path)
    text = _read(out / "CMakeLists.txt")
    _in_order(text, 'if("metal" IN_LIST TVMDEV_PLATFORMS)', "if(NOT APPLE)",
              "enable_language(OBJC)", "add_library(tvm_device_gpu_metal STATIC "
              "src/device/gpu/metal.m)",
              'target_link_libraries(tvm_device_gpu_metal PUBLIC "-framework Metal" '
              '"-framework Foundation")')
    assert 'set(TVMDEV_PLATFORMS "" CACHE STRING' in text  # not built by default


@pytest.mark.slow
def test_cmake_configures_metal_only_on_apple(cli: Callable[..., Result],
                                              tmp_path: Path) -> None:
    """CMake itself: the folder configures without metal, and with it only on macOS."""
    cmake = need_tool("cmake")
    out = _device(cli, tmp_path)
    run_ok([cmake, "-S", str(out), "-B", str(tmp_path / "b1")])
    proc = subprocess.run([cmake, "-S", str(out), "-B", str(tmp_path / "b2"),
                           "-DTVMDEV_PLATFORMS=metal"], capture_output=True, text=True)
    if shutil.which("xcrun") is None:
        assert proc.returncode != 0
        assert "platform metal builds on macOS only" in proc.stderr


def test_check_reads_the_c_but_not_the_objective_c(cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    """tvmdev check parses C: it checks a metal folder's kernels, finds the device
    implementation (metal.m) without parsing its Objective-C, and reports it only when
    it is missing; a broken kernel is still found."""
    need_tool("gcc")
    out = _device(cli, tmp_path)
    r = cli("check", str(out))
    assert r.code == 0, r.out
    (out / "src/device/gpu/metal.m").unlink()
    kernel = out / "src/kernels/gpu/gemm.c"
    kernel.write_text(kernel.read_text().replace("const float *A", "float *A", 1))
    r = cli("check", str(out))
    assert r.code == 1
    assert r.out.splitlines()[0] == (f"{out}/src/device/gpu/metal.m: missing (the device "
                                     "implementation)")
    assert "gpu_gemm_f32 is int32_t (float *" in r.out


# --- the macOS workflow --------------------------------------------------------------

def test_macos_workflow_builds_and_runs_the_metal_path() -> None:
    flow = yaml.safe_load(_read(REPO / ".github/workflows/macos.yml"))
    [job] = flow["jobs"].values()
    assert job["runs-on"] == "macos-latest"
    script = "\n".join(str(step.get("run", "")) for step in job["steps"])
    _in_order(script, "pip install -e", "tvmdev new-device metal --platform metal",
              "library_files(board_by_name(\"apple_m5_max\"))", 'objc="-fno-objc-arc',
              "xcrun clang $objc $inc -c build/metal/src/device/metal/metal.m",
              "xcrun clang $objc $inc -c build/metal/kernels/metal/tvmk_metal_gemm.m",
              "xcrun -sdk macosx metal -std=metal3.0 -c runtime/metal/gemm_simdgroup.metal",
              "xcrun -sdk macosx metal -std=metal4.0 -c runtime/metal/gemm_matmul2d.metal",
              "xcrun -sdk macosx metallib", "-DTVMDEV_PLATFORMS=metal",
              "tests/c/metal_smoke.c", "build/metal/smoke",
              "tvmdev run examples/mlp/mlp.yaml --board apple_m5_max")


def test_apple_board_generates_the_metal_build(tmp_path: Path) -> None:
    """What tvmdev run builds on macOS for apple_m5_max (the build itself runs only there):
    the devices' Objective-C implementations, and gemm operators on no device offloaded to
    a Metal device whose chain is the Metal GEMM, then the kind's kernel, then portable."""
    from tvmdev.load.model import load_model
    from tvmdev.run.job import prepare

    m = load_model(REPO / "examples/decoder/decoder.yaml")
    prep = prepare(m, board_by_name("apple_m5_max"), tmp_path / "b", "eager")
    rel = [str(p.relative_to(tmp_path / "b")) for p in prep.sources
           if str(p).startswith(str(tmp_path))]
    assert "devices/src/device/metal/metal.m" in rel
    assert "devices/kernels/metal/tvmk_metal_gemm.m" in rel
    chains = {op.name: [k.name for k in prep.compiled.chains[op.index]]
              for op in prep.model.operators if op.op == "gemm"}
    assert chains["down"] == ["tvmk_metal_gemm_f32", "metal_gemm_f32", "tvmk_gemm_f32"]
    assert chains["up"] == ["tvmk_gemm_q4c32_f32"]  # no Metal int4 kernel: portable
    assert all(op.device == "gpu" for op in prep.model.operators if op.op == "gemm")
    config = (tmp_path / "b/devices/kernels/metal/tvmk_metal_config.h").read_text()
    assert "400" in config
