"""The int8 forms of tvmdev's operators, gathered from the family modules (:mod:`.nn`,
:mod:`.quantize`, ...). An operator is int8 when any tensor it reads or writes is int8
(:func:`~.call.op_dtype`); its params and reference then come from :data:`S8OPS`, not
from the float op table.
"""

from __future__ import annotations

from .call import S8Op
from .nn import OPS as NN
from .quantize import OPS as QUANTIZE

S8OPS: dict[str, S8Op] = {**QUANTIZE, **NN}
