"""TFLM's signal library (``signal/micro/kernels``: the audio front end's custom ops,
SignalWindow, SignalRfft, SignalFilterBank, ...): numpy references computing the same
integer bits as TFLM, written from its arithmetic, not from its code.

Tensors are raw integers (int16, int32, uint32, uint64; no quantization). Each op's
reference takes numpy integer arrays and the op's params (the custom op's flexbuffer
options, named as TFLM names them) and returns arrays of the output dtypes.
"""
