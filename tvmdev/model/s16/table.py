"""The int16 forms of tvmdev's operators (TFLite's 16x8 scheme), gathered from the family
modules. An operator is int16 when any tensor it reads or writes is int16; its params and
reference then come from :data:`S16OPS`."""

from __future__ import annotations

from ..s8.call import S8Op
from .activations import OPS as ACTIVATIONS
from .elementwise import OPS as ELEMENTWISE
from .mean import OPS as MEAN
from .nn import OPS as NN
from .pool import OPS as POOL
from .quantize import OPS as QUANTIZE
from .simple import OPS as SIMPLE
from .softmax import OPS as SOFTMAX
from .transpose_conv import OPS as TRANSPOSE_CONV

S16OPS: dict[str, S8Op] = {**QUANTIZE, **NN, **ELEMENTWISE, **SIMPLE,
                           **SOFTMAX, **POOL, **TRANSPOSE_CONV, **ACTIVATIONS, **MEAN}
