"""Reading a number from a log field: the one rule every metric uses."""

from __future__ import annotations

import math
from typing import Any


def number_or_none(value: Any) -> float | None:
    """The field as a float; None when it is absent, not a number, a boolean, or NaN (fields
    missing from a line arrive as NaN when read from a DataFrame)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number
