"""The co-processor test's case: keyword_spotting's first four layers (conv2d 10x4,
depthwise 3x3, conv2d 1x1, depthwise 3x3, 64 channels each), their params as tvmdev
derives them, laid out by hand in the device's memory, and TFLM's tensors for two inputs
as the expected outputs. Written as coproc_case.h for tests/c/coproc_main.c."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LAYERS = (1, 2, 3, 4)  # keyword_spotting's operators placed on the co-processor
MEMORY_SIZE, ALIGN = 65536, 16
SCRATCH_BYTES = 8192


@dataclass
class Case:
    header: str
    expected: list[np.ndarray]  # TFLM's output of the last layer, per input
    input_bytes: int
    constant_bytes: int


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _tflite_index(path: Path) -> dict[str, int]:
    """TFLite tensor index by tvmdev's C name of it (as the importer names tensors)."""
    import tflite

    from tvmdev.frontends.graph import c_names

    g = tflite.Model.GetRootAsModel(path.read_bytes(), 0).Subgraphs(0)
    names = [g.Tensors(i).Name().decode().split(";")[0] for i in range(g.TensorsLength())]
    return {n: i for i, n in enumerate(c_names(names))}


def _c_array(ctype: str, name: str, values: Any) -> str:
    flat = [int(v) for v in np.asarray(values).reshape(-1)]
    rows = [", ".join(str(v) for v in flat[i:i + 16]) for i in range(0, len(flat), 16)]
    body = ",\n    ".join(rows)
    return (f"static const {ctype} {name}[{len(flat)}] __attribute__((aligned(16))) = "
            f"{{\n    {body}\n}};\n")


def _params(struct: str, name: str, p: dict[str, Any]) -> str:
    # The scratch is the device's (the job carries its address): the CPU pointer is NULL.
    fields = [f".scratch_bytes = {SCRATCH_BYTES}", ".scratch = NULL"]
    for k, v in p.items():
        if k in ("output_multiplier", "output_shift"):
            fields.append(f".{k} = {name}_{k}")
        elif isinstance(v, (int, np.integer)) and k not in ("scratch_bytes", "scratch"):
            fields.append(f".{k} = {int(v)}")
    return f"static const struct {struct} {name}_params = {{{', '.join(fields)}}};\n"


def build(kws: Path, tflm_tensors: Any, runs: int, fault: int, fault_arg: int,
          wait_ms: int) -> Case:
    """The header and TFLM's expected outputs."""
    from tvmdev.frontends.importer import import_file

    model = import_file(kws).to_model()
    ops = [model.operators[i] for i in LAYERS]
    first_in, last_out = ops[0].inputs[0], ops[-1].outputs[0]
    index = _tflite_index(kws)
    rng = np.random.default_rng(23)
    inputs, expected = [], []
    for _ in range(2):
        x = rng.uniform(-30, 30, model.tensors[model.inputs[0]].shape).astype(np.float32)
        x = x.astype(model.tensors[model.inputs[0]].dtype)
        got = tflm_tensors(kws.read_bytes(), [x], [index[first_in], index[last_out]])
        inputs.append(np.asarray(got[index[first_in]]).astype(np.int8))
        expected.append(np.asarray(got[index[last_out]]).astype(np.int8))
    # Two activation buffers used in turn, the scratch, then the constants.
    act = max(_align(int(np.prod(model.tensors[t].shape))) for op in ops
              for t in (op.inputs[0], op.outputs[0]))
    buffers = [0, act]
    scratch = 2 * act
    addr = scratch + SCRATCH_BYTES
    out = ["#ifndef COPROC_CASE_H_\n#define COPROC_CASE_H_\n#include <stddef.h>\n",
           '#include "uart_npu_link.h"\n']
    consts, layers, local = [], [], []
    for i, op in enumerate(ops):
        struct, p = model.operator_params(op)
        name = f"layer{i}"
        for k in ("output_multiplier", "output_shift"):
            out.append(_c_array("int32_t", f"{name}_{k}", p[k].values))
        addrs = []
        for t in op.inputs[1:3]:
            data = model.constants[t]
            ctype = "int8_t" if data.dtype == np.int8 else "int32_t"
            out.append(_c_array(ctype, f"{name}_{t}", data))
            consts.append((addr, f"{name}_{t}", data.nbytes))
            addrs.append(addr)
            addr = _align(addr + data.nbytes)
        out.append(_params(struct, name, p))
        fn = "uart_npu_conv2d_s8" if op.op == "conv2d" else "uart_npu_depthwise_conv2d_s8"
        w, b = (f"{name}_{t}" for t in op.inputs[1:3])
        local.append(f"    case {i}: {{\n        struct {struct} p = {name}_params;\n\n"
                     f"        p.scratch = scratch;\n        return CASE_LOCAL_{op.op.upper()}"
                     f"(in, {w}, {b}, out, &p, NULL);\n    }}\n")
        layers.append(f"    case {i}:\n        return {fn}({buffers[i % 2]}u, {addrs[0]}u, "
                      f"{addrs[1]}u, {buffers[(i + 1) % 2]}u, &{name}_params, dev, "
                      f"{scratch}u);\n")
    assert addr <= MEMORY_SIZE, addr
    out += [_c_array("int8_t", f"case_input{k}", x) for k, x in enumerate(inputs)]
    out.append("static const int8_t *const case_inputs[] = {case_input0, case_input1};\n")
    out.append("static const struct { uint32_t addr; const void *data; uint32_t bytes; } "
               "case_constants[] = {\n" + "".join(f"    {{{a}u, {n}, {b}u}},\n"
                                                  for a, n, b in consts) + "};\n")
    out.append("static int32_t case_layer(uint32_t i, tvm_device_uart_npu_t *dev)\n{\n"
               "    switch (i) {\n" + "".join(layers)
               + "    default:\n        return TVM_DEVICE_ERR_INVALID;\n    }\n}\n")
    out.append("/* The same layer on the main board (no offload): in and out are CPU buffers. */\n"
               "static int32_t case_layer_local(uint32_t i, const int8_t *in, int8_t *out, "
               "void *scratch)\n{\n    switch (i) {\n" + "".join(local)
               + "    default:\n        return TVM_DEVICE_ERR_INVALID;\n    }\n}\n")
    defines = {"CASE_INPUTS": 2, "CASE_CONSTANTS": len(consts), "CASE_LAYERS": len(ops),
               "CASE_INPUT_ADDR": "0u", "CASE_INPUT_BYTES": f"{inputs[0].size}u",
               "CASE_OUTPUT_ADDR": f"{buffers[len(ops) % 2]}u",
               "CASE_OUTPUT_BYTES": f"{expected[0].size}u", "CASE_RUNS": f"{runs}u",
               "CASE_FAULT": fault, "CASE_FAULT_ARG": f"{fault_arg}u",
               "CASE_WAIT_MS": f"{wait_ms}u", "CASE_ACT_BYTES": f"{act}u",
               "CASE_SCRATCH_BYTES": f"{SCRATCH_BYTES}u"}
    out += [f"#define {k} {v}\n" for k, v in defines.items()]
    out.append("#endif\n")
    return Case("".join(out), expected, inputs[0].size,
                sum(b for _, _, b in consts))
