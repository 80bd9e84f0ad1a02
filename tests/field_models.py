"""The models of the field that issue 21 brings in, and where each is public: a pinned tree
(the environment variable naming its checkout) and the file's path in it. Never
committed: tests and benchmarks/field_bench.py read them from the trees, and skip or say
why when a tree is absent."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

SEANET = "tensorflow/lite/micro/integration_tests/seanet"
MODELS = {
    "person_detect": ("TFLM_SOURCE_DIR", "tensorflow/lite/micro/models/person_detect.tflite"),
    "mobilenet_v2": ("TFLM_SOURCE_DIR", "third_party/xtensa/examples/pytorch_to_tflite/"
                     "mobilenet_v2_quantized_1x3x224x224.tflite"),
    "vww": ("TINYENGINE_SOURCE_DIR", "assets/vww.tflite"),
    "mcunetv2_large": ("TINYENGINE_SOURCE_DIR", "assets/mcunetv2_large.tflite"),
    "detection": ("TINYENGINE_SOURCE_DIR", "assets/detection.tflite"),
    "lenet": ("TINYENGINE_SOURCE_DIR",
              "experimental/mnist_demo/assets/ptq_mnist_lenet-300-100.tflite"),
    "keyword_scrambled": ("TFLM_SOURCE_DIR",
                          "tensorflow/lite/micro/models/keyword_scrambled.tflite"),
    "audio_preprocessor_int8": ("TFLM_SOURCE_DIR", "tensorflow/lite/micro/examples/"
                                "micro_speech/models/audio_preprocessor_int8.tflite"),
    "trained_lstm_int8": ("TFLM_SOURCE_DIR", "tensorflow/lite/micro/examples/mnist_lstm/"
                          "trained_lstm_int8.tflite"),
    "dtln_noise_suppression": ("TFLM_SOURCE_DIR", "tensorflow/lite/micro/examples/dtln/"
                               "dtln_noise_suppression.tflite"),
    **{f"seanet_{op}0": ("TFLM_SOURCE_DIR", f"{SEANET}/{op}/{op}0.tflite")
       for op in ("add", "conv", "leaky_relu", "pad", "quantize", "strided_slice", "sub",
                  "transpose_conv")},
}
# Each tree: what it is, and the commit whose files the tests were written against.
TREES = {"TFLM_SOURCE_DIR": ("TFLM's tree", "https://github.com/tensorflow/tflite-micro",
                             "90b983c2b3f1480642e040bbd2ddb37b998f3424"),
         "TINYENGINE_SOURCE_DIR": ("MIT TinyEngine's tree",
                                   "https://github.com/mit-han-lab/tinyengine",
                                   "47bb283ce9d7e33c6fea623b3792726046dc9cfa")}
# The pin: each model's SHA-256 at those commits (a tree at another commit may hold other
# bytes under the same name; the tests then say so rather than test something else).
SHA256 = {
    "person_detect": "808cfdfc0cf3a6fa6f6fa26bfa379ea97c16d5db7334637766e39c3408502e9d",
    "mobilenet_v2": "2778683128d56fe4a3da6b8cdbbb00ec12663553f30a9b4fe927747ba637bb2f",
    "vww": "dfd1a2bec6f170299cba46d797eb7392aca207faa8a26004fffedcdca76befcb",
    "mcunetv2_large": "3dedeab64f5a2c03455e9af783a0195f7e4aad47e67b42c383c6954944a4e4af",
    "detection": "ae2bf7c4d5a68def47db4c8181c051ad30d1d97ec7573555fd753faebe38ef53",
    "lenet": "5cc4330a9e6023f87e5f927ea664e4f3bb109ca4d4d90c406abca403fe7034f0",
    "keyword_scrambled": "2335faf0a066193cfbd499ebabcce06629c223ec24afbd1f27aaaf0a4273b1a1",
    "audio_preprocessor_int8": "278949d197166fb8b580c0bdc94e902fb709fec0569dcf5766816b28285440e5",
    "trained_lstm_int8": "a44e4d8a6c051db582414915ee28ee0462bd47e9f150e4a095fb5a126b88d885",
    "dtln_noise_suppression": "91e94316d1a4747dd3bddcf58423927e97213913a9b4210edca3f9402b2ff0fe",
    "seanet_add0": "fa1784fd09d28e6a0ee77450424b956e62254f311972218446d3da68e94bce91",
    "seanet_conv0": "e032679228ede57c8504e7db6b6a6322343c489b727036f9802fcb3d6c42f4b2",
    "seanet_leaky_relu0": "a033bffb503ba5b3c0b1e1e0a0f90f17515b010ec7fc0915a9305a2d068e51b7",
    "seanet_pad0": "592f48bb46f923cae41bf8362e830568f2e0bf7c36f579e98888520a0d6d0482",
    "seanet_quantize0": "89a1cef96cefea3ccee040caeaa58972af6a02db8dd997391cb07777311f77a7",
    "seanet_strided_slice0": "231a09c55aad7d7e1497f8b5c276fbf383488f42307bc840ba59423630acfdea",
    "seanet_sub0": "f1e2eac1de6716bb341d5bd2ccbad6e0a5ab887c2c25660a29d388ad57690159",
    "seanet_transpose_conv0": "70a234e1eb8f1620abe10aeed9212d1d759f57f386c1a4f4465913a4d5800e23",
}


def locate(name: str) -> Path | str:
    """The model's file, or why it is out of reach (its tree unset, or the file missing)."""
    var, rel = MODELS[name]
    what, repository, commit = TREES[var]
    root = os.environ.get(var)
    if not root:
        return (f"{var} is not set: {what} holds {Path(rel).name}; check out {repository} "
                f"at {commit} and set it")
    path = Path(root) / rel
    if not path.is_file():
        return f"{var}={root} has no {rel}"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256[name]:
        return (f"{path} is not the pinned model (SHA-256 {digest[:12]}..., expected "
                f"{SHA256[name][:12]}...): check out {repository} at {commit}")
    return path
