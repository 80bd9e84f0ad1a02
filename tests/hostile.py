"""A seeded generator of hostile models: the examples (examples/*/*.yaml) with names
turned into strings C cannot take as they are (quotes, backslashes, comment ends, printf
formats, trigraphs, line breaks, unicode, keywords, standard and generated macros, very
long names, pairs that collide once converted) and values C cannot hold (floats beyond
float32, integers beyond int32, tensors beyond 2^31 bytes, unread constants, optional
inputs given every way). Each case is a model document and what was done to it."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent

HOSTILE = [
    'a"b', "a\\b", "x*/y", "/*", "*/", "%s", "%n%d%%", "??/", "??=x", "a??/\nb", "a\nb",
    "\r", "tab\there", "é", "naïve", "中文", "🙂", "Ω_1", "", " ", "0", "1x", "_x", "__x",
    "_X", "x_", "int", "class", "for", "bool", "true", "EOF", "NULL", "INT32_MAX",
    "SIZE_MAX", "SIGINT", "errno", "stdin", "linux", "I", "TVM_DEVICE_OK",
    "TVM_DEVICE_DECLINED", "TVM_DEVICE_API_VERSION", "{M}_H_", "{M}_WORKSPACE_SIZE",
    "{M}_TRACE", "{M}_CONST", "{M}_DEVICE_NPU0", "tvmgen_{m}_run", "workspace", "ws", "ret",
    "inputs", "outputs", "devices", "status", "gemm_params", "matmul_params", "t_x",
    "in_x", "dev_t", "main", "MAX_THREADS", "STACK_PAINT", "serving_default_input_1:0",
    "StatefulPartitionedCall/model/conv2d/BiasAdd", "model/dense/MatMul;model/dense/bias",
    "n" * 300, "q" * 64, "a:0", "a;0", "A:0", "h.1", "h_1", "x-y", "x y", "x\x00y",
    "\u2028", "a'b", "$x", "@x", "x\\", "\\",
]
ALPHABET = "\"\\*/%?\n \té中_:;.-0aAZ9{}()#"
# Pairs that are two names until converted to C.
PAIRS = [("a:0", "a;0"), ("a", "A"), ("h.1", "h_1"), ("workspace", "WORKSPACE"),
         ("x", "x_2"), ("é", "e"), ("n" * 70, "n" * 71)]
KIND_PAIRS = [("x1", "x_1"), ("acc", "acc_posix"), ("acc", "acc_open"), ("status", "npu"),
              ("acc", "ACC"), ("ethos-u", "ethos_u")]
DEVICE_PAIRS = [("npu", "NPU"), ("x_size", "y"), ("t", "u")]
FLOATS = [1e39, -1e39, 3.4028236e38, 3.4028234e38, 1e-50, -1e-45, 1e-40, 10**400, 10**30,
          float("inf"), float("nan"), 0.0, -0.0]
INTS = [2**31, 2**31 - 1, -(2**31) - 1, 2**40, 0, -1, 1, 2]


@dataclass
class Case:
    index: int
    cls: str  # "names" or "values"
    what: list[str]
    doc: dict[str, Any]
    example: str

    def describe(self) -> str:
        return f"case {self.index} ({self.example}, {self.cls}): " + "; ".join(self.what)


def examples() -> dict[str, dict[str, Any]]:
    """The examples, made small enough to compile fast (the decoder's 128 x 256 weights
    become 32 x 64) and with npy paths made absolute."""
    out = {}
    for path in sorted(REPO.glob("examples/*/*.yaml")):
        text = path.read_text()
        if path.stem == "decoder":
            text = text.replace("128", "32").replace("256", "64")
        doc = yaml.safe_load(text)
        for c in (doc.get("constants") or {}).values():
            if "npy" in c:
                c["npy"] = str(path.parent / c["npy"])
        out[path.stem] = doc
    return out


def _tensors(doc: dict[str, Any]) -> dict[str, list[str]]:
    mids = [t for op in doc["operators"] for t in op["outputs"] if t not in doc["outputs"]]
    return {"input": list(doc["inputs"]), "output": list(doc["outputs"]),
            "constant": list(doc.get("constants") or {}), "intermediate": mids}


def rename_tensor(doc: dict[str, Any], old: str, new: Any) -> None:
    for sec in ("inputs", "outputs", "constants"):
        if old in (doc.get(sec) or {}):
            doc[sec] = {(new if k == old else k): v for k, v in doc[sec].items()}
    for op in doc["operators"]:
        op["inputs"] = [new if t == old else t for t in op["inputs"]]
        op["outputs"] = [new if t == old else t for t in op["outputs"]]


def rename_device(doc: dict[str, Any], old: str, new: Any) -> None:
    doc["devices"] = {(new if k == old else k): v for k, v in doc["devices"].items()}
    for op in doc["operators"]:
        if op.get("device") == old:
            op["device"] = new


def _hostile(rng: random.Random, model: str) -> str:
    if rng.random() < 0.25:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12)))
    return rng.choice(HOSTILE).replace("{M}", f"TVMGEN_{model.upper()}").replace(
        "{m}", model)


def mutate_name(rng: random.Random, doc: dict[str, Any]) -> str:
    """Rename one thing of ``doc`` (or two, to a colliding pair); say what."""
    target = rng.choice(["tensor"] * 5 + ["operator"] * 3 + ["device", "kind", "model",
                                                           "pair", "kind pair",
                                                           "device pair"])
    devices = list(doc.get("devices") or {})
    if target in ("device", "kind", "device pair", "kind pair") and not devices:
        target = "tensor"
    if target == "tensor":
        role, names = rng.choice([(r, n) for r, n in _tensors(doc).items() if n])
        old, new = rng.choice(names), _hostile(rng, doc["name"])
        rename_tensor(doc, old, new)
        return f"{role} {old!r} -> {new!r}"
    if target == "operator":
        op = rng.choice(doc["operators"])
        old, op["name"] = op["name"], _hostile(rng, doc["name"])
        return f"operator {old!r} -> {op['name']!r}"
    if target == "device":
        old, new = rng.choice(devices), _hostile(rng, doc["name"])
        rename_device(doc, old, new)
        return f"device {old!r} -> {new!r}"
    if target == "kind":
        new = rng.choice([_hostile(rng, doc["name"]), "status", "a_posix", "ethos-u", "x" * 70])
        for d in doc["devices"].values():
            d["kind"] = new
        return f"kind -> {new!r}"
    if target == "model":
        doc["name"] = new = _hostile(rng, "m")
        return f"model -> {new!r}"
    if target == "pair":
        a, b = rng.choice(PAIRS)
        t1, t2 = rng.sample([t for ts in _tensors(doc).values() for t in ts], 2)
        rename_tensor(doc, t1, a)
        rename_tensor(doc, t2, b)
        return f"tensors {t1!r}, {t2!r} -> {a!r}, {b!r}"
    if target == "device pair" and len(devices) >= 2:
        a, b = rng.choice(DEVICE_PAIRS)
        rename_device(doc, devices[0], a)
        rename_device(doc, devices[1], b)
        return f"devices -> {a!r}, {b!r}"
    a, b = rng.choice(KIND_PAIRS)
    doc["devices"][devices[0]]["kind"] = a
    doc["devices"][devices[-1]]["kind"] = b
    return f"kinds -> {a!r}, {b!r}"


def _attr_ops(doc: dict[str, Any], kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    return [op for op in doc["operators"] if op["op"] in kinds]


def mutate_value(rng: random.Random, doc: dict[str, Any]) -> str:
    """Change one value of ``doc`` to one C may not hold; say what."""
    choice = rng.choice(["float attr"] * 3 + ["int attr"] * 2 + ["shape", "unread constant",
                                                                "constant values", "random",
                                                                "optional input"] * 2)
    consts = doc.setdefault("constants", {})
    if choice == "float attr" and _attr_ops(doc, ("gemm",)):
        op = rng.choice(_attr_ops(doc, ("gemm",)))
        key, value = rng.choice(["alpha", "beta"]), rng.choice(FLOATS)
        op.setdefault("attrs", {})[key] = value
        return f"{op['name']}.{key} = {value!r}"[:80]
    if choice == "int attr":
        op = rng.choice(_attr_ops(doc, ("softmax", "conv2d", "maxpool2d", "avgpool2d",
                                         "flatten")) or doc["operators"])
        keys = {"softmax": ["axis"], "flatten": ["axis"], "conv2d": ["strides", "pads",
                                                                       "group", "dilations"],
                "maxpool2d": ["strides", "pads", "kernel_shape"],
                "avgpool2d": ["strides", "pads", "kernel_shape"]}.get(op["op"], ["axis"])
        key = rng.choice(keys)
        n = {"strides": 2, "dilations": 2, "kernel_shape": 2, "pads": 4}.get(key, 0)
        value: Any = rng.choice(INTS) if not n else [rng.choice(INTS) for _ in range(n)]
        op.setdefault("attrs", {})[key] = value
        return f"{op['name']}.{key} = {value!r}"
    if choice == "shape":
        sec = rng.choice(["inputs", "constants", "outputs"])
        name = rng.choice(list(doc[sec] or doc["inputs"]))
        t = (doc[sec] or doc["inputs"])[name]
        t["shape"] = rng.choice([[2**31], [65536, 65536], [2**29], [1] * 7, [0], [-1],
                                 [3, 2**30], [1, 2**28]])
        if sec == "constants":
            t.pop("values", None), t.pop("npy", None)
            t["random"] = {"seed": 1, "low": 0, "high": 1}
        return f"shape of {name!r} = {t['shape']}"
    if choice == "unread constant":
        consts[rng.choice(["unread", "EOF", "w\"*/"])] = {
            "shape": [3], "dtype": "float32", "values": [1.0, 2.0, 3.0]}
        return "a constant no operator reads"
    if choice in ("constant values", "random") and consts:
        name = rng.choice(list(consts))
        c = consts[name]
        shape = c["shape"]
        count = 1
        for d in shape:
            count *= d
        for key in ("values", "npy", "random"):
            c.pop(key, None)
        if choice == "random":
            low, high = rng.choice([(-1e308, 1e308), (1e39, 2e39), (10**400, 1), (0, 1e-50),
                                    (float("nan"), 1)])
            c["random"] = {"seed": rng.choice([0, 10**30]), "low": low, "high": high}
            return f"{name!r} random in [{low!r}, {high!r}]"[:80]
        value = rng.choice([1e39, 10**400, 1e-50, 3.4028234e38, -0.0])
        c["values"] = [value] * min(count, 4096)  # a huge shape: too few, refused
        return f"{name!r} values = {value!r}"[:80]
    return optional_input(rng, doc)


def optional_input(rng: random.Random, doc: dict[str, Any]) -> str:
    """Give a gemm's C or a conv2d's B every way: absent, null, '', a constant of a
    broadcast shape, a model input."""
    ops = _attr_ops(doc, ("gemm", "conv2d"))
    if not ops:
        return "no optional input"
    op = rng.choice(ops)
    ins = op["inputs"][:2]
    how = rng.choice(["absent", "null", "empty", "constant", "input"])
    if how == "null":
        ins.append(None)
    elif how == "empty":
        ins.append("")
    elif how in ("constant", "input"):
        name = f"opt_{how}"
        w = (doc.get("constants") or {}).get(ins[1]) or {"shape": [1, 1]}
        if op["op"] == "gemm":
            n = w["shape"][0] if (op.get("attrs") or {}).get("transB") else w["shape"][-1]
            shape = rng.choice([[], [1], [1, 1], [n], [1, n]])  # every example has M = 1
        else:
            shape = [w["shape"][0]]
        sec = "constants" if how == "constant" else "inputs"
        doc.setdefault(sec, {})[name] = {"shape": shape, "dtype": "float32",
                                         **({"random": {"seed": 3, "low": -1, "high": 1}}
                                            if how == "constant" else {})}
        ins.append(name)
    op["inputs"] = ins
    return f"{op['name']} ({op['op']}) optional input {how}"


def cases(seed: int, count: int, start: int = 0) -> list[Case]:
    """``count`` cases from ``seed``, numbered from ``start``: each one example with one
    to three mutations of one class."""
    base = examples()
    out = []
    for i in range(start, start + count):
        rng = random.Random(seed * 1_000_003 + i)
        example = rng.choice(sorted(base))
        doc = copy.deepcopy(base[example])
        cls = "names" if i % 2 == 0 else "values"
        mutate = mutate_name if cls == "names" else mutate_value
        what = [mutate(rng, doc) for _ in range(rng.choice([1, 1, 2, 3]))]
        out.append(Case(i, cls, what, doc, example))
    return out
