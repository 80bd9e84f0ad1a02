"""Random model graphs for the benchmarks (shared by plan_bench and generator_bench)."""

from __future__ import annotations

import random
from pathlib import Path

import yaml


def random_graph(n_ops: int, seed: int) -> dict:
    """A random DAG: a main chain with skip connections and occasional branches, mixing
    gemm, relu, sigmoid, add, mul and softmax on [1, W] tensors."""
    rng = random.Random(seed)
    widths = [8, 16, 32, 64]
    tensors = {"x": rng.choice(widths)}
    constants, ops = {}, []
    live = ["x"]
    for i in range(n_ops):
        src = live[-1] if rng.random() < 0.8 else rng.choice(live[-16:])
        w = tensors[src]
        r = rng.random()
        out = f"t{i}"
        if r < 0.3:
            w_out = rng.choice(widths)
            constants[f"w{i}"] = {"shape": [w, w_out], "dtype": "float32",
                                  "random": {"seed": i, "low": -0.1, "high": 0.1}}
            ops.append({"name": f"o{i}", "op": "gemm", "inputs": [src, f"w{i}"],
                        "outputs": [out]})
            tensors[out] = w_out
        elif r < 0.65:
            op = rng.choice(["relu", "sigmoid", "softmax"])
            ops.append({"name": f"o{i}", "op": op, "inputs": [src], "outputs": [out]})
            tensors[out] = w
        else:
            same = [t for t in live[-24:] if tensors[t] == w and t != src] or [src]
            other = rng.choice(same)
            op = rng.choice(["add", "mul"])
            ops.append({"name": f"o{i}", "op": op, "inputs": [src, other], "outputs": [out]})
            tensors[out] = w
        live.append(out)
    last = ops[-1]["outputs"][0]
    ops[-1]["outputs"] = ["y"]
    return {"name": "rnd", "inputs": {"x": {"shape": [1, tensors["x"]], "dtype": "float32"}},
            "outputs": {"y": {"shape": [1, tensors[last]], "dtype": "float32"}},
            "constants": constants, "operators": ops}


def write_graph(folder: Path, n_ops: int, seed: int) -> Path:
    path = folder / f"rnd_{n_ops}_{seed}.yaml"
    path.write_text(yaml.safe_dump(random_graph(n_ops, seed), default_flow_style=None,
                                   sort_keys=False))
    return path
