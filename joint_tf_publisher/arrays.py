"""The package's numpy array type aliases, in one place (a leaf: every layer may import it).

Shapes and units are the business of each name that holds such an array: ``Array`` holds
float64 values (metres, radians, quaternion components), ``IndexArray`` indices (into moving
joints, variable slots, result rows), ``BoolArray`` one flag per index.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
IndexArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]
ComplexArray = NDArray[np.complex128]
