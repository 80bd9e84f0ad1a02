"""The int8 forms of tvmdev's operators, gathered from the family modules (:mod:`.nn`,
:mod:`.quantize`, ...). An operator is int8 when any tensor it reads or writes is int8
(:func:`~.call.op_dtype`); its params and reference then come from :data:`S8OPS`, not
from the float op table.
"""

from __future__ import annotations

from .activations import OPS as ACTIVATIONS
from .call import S8Op
from .concat import OPS as CONCAT
from .elementwise import OPS as ELEMENTWISE
from .fused import OPS as FUSED
from .layout import OPS as LAYOUT
from .log_softmax import OPS as LOG_SOFTMAX
from .lstm import OPS as LSTM
from .lstm import STATEFUL as LSTM_STATEFUL
from .mean import OPS as MEAN
from .nn import OPS as NN
from .pad import OPS as PAD
from .piecewise import OPS as PIECEWISE
from .pool import OPS as POOL
from .quantize import OPS as QUANTIZE
from .resize import OPS as RESIZE
from .softmax import OPS as SOFTMAX
from .svdf import OPS as SVDF
from .svdf import STATEFUL as SVDF_STATEFUL
from .transpose_conv import OPS as TRANSPOSE_CONV

S8OPS: dict[str, S8Op] = {**QUANTIZE, **NN, **ELEMENTWISE, **POOL, **SOFTMAX, **ACTIVATIONS,
                          **PAD, **MEAN, **CONCAT, **LAYOUT, **PIECEWISE, **LOG_SOFTMAX,
                          **RESIZE, **TRANSPOSE_CONV, **SVDF, **LSTM, **FUSED}
# The int8 forms of the ops with state (tvmdev.model.recurrent): their references return
# the output and the updated states, in the order of the op's state arguments.
S8_STATEFUL = {**SVDF_STATEFUL, **LSTM_STATEFUL}
