"""Operators on raw (unquantized) integer tensors: int8, int16, int32, uint32 and uint64
values that are numbers, not quantized reals (TFLite's int32 arithmetic, CAST between
integer types, and TFLM's signal library of audio front-end ops).

An operator is in its raw-integer form when it is a signal op or a CAST, or when every
tensor it reads and writes is an integer without quantization (:func:`.form.is_raw`);
its params and reference then come from :data:`.table.INT_OPS`, apart from the float
ops' and the int8 forms'. Adding one: a family module's ``OPS`` maps the tvmdev op to an
:class:`.form.IntOp`, :mod:`.table` merges it, and the portable ``kernels.yaml`` lists
its kernels with the dtypes of their arguments.
"""
