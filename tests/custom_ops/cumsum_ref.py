"""tests/custom_ops/cumsum.yaml's reference: TFLite's CUMSUM, with numpy."""

import numpy as np


def cumsum(X: np.ndarray, axis: np.ndarray, *, exclusive: bool, reverse: bool) -> np.ndarray:
    """The cumulative sum of X along axis[0] (exclusive: of the values before)."""
    a = int(axis[0])
    x = np.flip(X.astype(np.float64), a) if reverse else X.astype(np.float64)
    y = np.cumsum(x, axis=a)
    if exclusive:
        y = y - x
    return np.flip(y, a) if reverse else y
