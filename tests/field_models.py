"""The models of the field that issue 21 brings in, and where each is public: a tree
(the environment variable naming its checkout) and the file's path in it. Never
committed: tests and benchmarks/field_bench.py read them from the trees, and skip or say
why when a tree is absent."""

from __future__ import annotations

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
TREES = {"TFLM_SOURCE_DIR": "TFLM's tree (github.com/tensorflow/tflite-micro)",
         "TINYENGINE_SOURCE_DIR": "MIT TinyEngine's tree (github.com/mit-han-lab/tinyengine)"}


def locate(name: str) -> Path | str:
    """The model's file, or why it is out of reach (its tree unset, or the file missing)."""
    var, rel = MODELS[name]
    root = os.environ.get(var)
    if not root:
        return f"{var} is not set: {TREES[var]} holds {Path(rel).name}; check it out and set it"
    path = Path(root) / rel
    return path if path.is_file() else f"{var}={root} has no {rel}"
