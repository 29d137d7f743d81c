"""Token budgets: ``25k``, ``25000``, ``0.5M``, ``1_000``, parsed and written short.

Defined once, here, and importable without the harness (only the standard library): the run folder's name
(``_naming.py``) writes the budget in tokens. ``harness.budget`` re-exports them. The leading ``_``: Hydra's
plugin scan does not execute this module again, so ``BudgetError`` stays one class (resolvers.py says why).
"""

from __future__ import annotations

import re

_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kKmM]?)\s*$")
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


class BudgetError(ValueError):
    """A budget that is not a positive token count."""


def parse_budget(value: object) -> int:
    """Turn ``25k``, ``25000``, ``0.5M`` (or an int) into a positive token count.

    Raises ``BudgetError`` with the accepted forms for anything else.
    """
    if isinstance(value, bool):
        raise BudgetError(f"invalid budget {value!r}")
    if isinstance(value, int):
        tokens = value
    elif isinstance(value, float):
        tokens = int(value)
    else:
        match = _BUDGET.match(str(value).replace("_", ""))
        if not match:
            raise BudgetError(f"invalid budget {value!r} (valid: a token count such as 25000, 25k or 0.5M)")
        number, suffix = match.groups()
        tokens = round(float(number) * _SCALE[suffix.lower()])
    if tokens <= 0:
        raise BudgetError(f"invalid budget {value!r} (it must be a positive token count, e.g. 8k)")
    return tokens


def format_budget(tokens: int) -> str:
    """Short form of a token count: 25000 -> ``25k``, 1500000 -> ``1.5M``."""
    if tokens >= 1_000_000 and tokens % 100_000 == 0:
        return f"{tokens / 1_000_000:g}M"
    if tokens >= 1_000 and tokens % 100 == 0:
        return f"{tokens / 1_000:g}k"
    return str(tokens)
