"""int8 (TFLite's quantization spec; a tensor's quantization is
:class:`tvmdev.model.quant.Quant`): one module per family of operators, what generation
derives for a kernel (its params: multipliers, shifts, offsets, clamps, as TFLM's Prepare
computes them) and the numpy reference that computes the same integer arithmetic
independently of the C kernels.

Real value = scale * (q - zero_point). Activations are int8, asymmetric, per tensor;
weights int8, symmetric (zero point 0), per tensor or per output channel (``axis``); bias
int32 with scale input_scale * weight_scale and zero point 0.
"""

from __future__ import annotations
