"""The package's numpy array type aliases, in one place (a leaf: every layer may import it).

Shapes and units are the business of each name that holds such an array: ``Array`` holds
float64 values (metres, radians, quaternion components), ``IndexArray`` indices (into moving
joints, variable slots, result rows), ``BoolArray`` one flag per index.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
IndexArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]
ComplexArray = NDArray[np.complex128]


def distinct(values: NDArray[Any]) -> NDArray[Any]:
    """The sorted distinct elements of a 1-d array, as ``np.unique`` gives them: without it,
    which imports ``numpy.ma`` on its first call (numpy 2.x; about 1.2 MB of a running node's
    memory for one check)."""
    ordered = np.sort(values)
    if ordered.size < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
