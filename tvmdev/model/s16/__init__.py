"""int16 (TFLite's 16x8 quantization: int16 activations, symmetric per tensor; int8
weights, per channel; int64 biases): one module per family of operators, each form an
:class:`~tvmdev.model.s8.call.S8Op` (the int8 forms' record: params as TFLM's Prepare
derives them, and a numpy reference computing TFLM's integer arithmetic), gathered in
:data:`.table.S16OPS`. An operator is int16 when any tensor it reads or writes is int16
(:func:`~tvmdev.model.s8.call.op_dtype`).

Most forms share their params struct with the int8 form (the arithmetic is the same
with int16 clamps, or an int64 accumulator): only the kernels differ
(``runtime/kernels/portable/tvmk_s16.h``).
"""

from __future__ import annotations
