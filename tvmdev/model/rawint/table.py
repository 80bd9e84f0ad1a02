"""The raw-integer forms of tvmdev's operators, gathered from the family modules, and the
op definitions of the operators that only exist on raw integers."""

from __future__ import annotations

from .builtins import OPDEFS as BUILTIN_OPDEFS
from .builtins import OPS as BUILTINS
from .form import IntOp
from .signal import OPDEFS as SIGNAL_OPDEFS
from .signal import OPS as SIGNAL

INT_OPS: dict[str, IntOp] = {**BUILTINS, **SIGNAL}
INT_OPDEFS = [*BUILTIN_OPDEFS, *SIGNAL_OPDEFS]
