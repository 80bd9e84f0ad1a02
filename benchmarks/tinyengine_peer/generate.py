"""Runs MIT TinyEngine's code generator on one .tflite (benchmarks/_tinyengine_peer.py runs
this file with the generator's Python, its tree on PYTHONPATH, in the folder to write
``codegen/`` into).

    python generate.py MODEL REQUANT PATCHES SPLIT

REQUANT is ``float`` (TinyEngine's default, ``fp_requantize=True``) or ``integer``;
PATCHES 0 is layer by layer, n > 0 patch-based inference with n x n patches split at
layer SPLIT (MCUNetV2; TinyEngine's examples/vww_patchbased.py uses 2 and 5). The calls
are the ones TinyEngine's code_generator/CodegenUtilTFlite.py makes, with the two
switches it fixes made arguments. The last line printed is JSON: ``{"peak": bytes}`` (the
memory scheduler's input_output buffer), or ``{"refused": why}``.
"""

import json
import sys
import traceback


def generate(model: str, requant: str, patches: int, split: int) -> int:
    from code_generator.CodeGenerator import CodeGenerator
    from code_generator.GeneralMemoryScheduler import GeneralMemoryScheduler
    from code_generator.InputResizer import PatchResizer
    from code_generator.PatchBasedUtil import getPatchParams
    from code_generator.TfliteConvertor import TfliteConvertor

    convertor = TfliteConvertor(model)
    convertor.parseOperatorInfo()
    layer = convertor.layer
    patch_params = None
    if patches > 0:
        patch_params = getPatchParams(layer, split, patches)
        PatchResizer(layer).patchResize(patch_params["layer_cnt"], patch_params["grain_rf"],
                                        patch_params["grain_rf_height"])
    scheduler = GeneralMemoryScheduler(layer, False, False, outputTables=[], inplace=True,
                                       mem_visual_path="schedule.png",
                                       VisaulizeTrainable=False)
    scheduler.USE_INPLACE = True
    scheduler.allocateMemory()
    CodeGenerator(memsche=scheduler, inplace=True, unsigned_input=False,
                  patch_params=patch_params, FP_output=False, profile_mode=False,
                  fp_requantize=requant == "float", tflite_op=False, dummy_address=False,
                  outputTables=getattr(convertor, "outputTables", [])).codeGeneration()
    return int(scheduler.buffers["input_output"])


if __name__ == "__main__":
    try:
        peak = generate(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    except Exception as exc:  # the generator's refusal, as a line for the peer
        traceback.print_exc()
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno}"
        print(json.dumps({"refused": f"{type(exc).__name__} at {where}: {exc}"[:300]}))
    else:
        print(json.dumps({"peak": peak}))
