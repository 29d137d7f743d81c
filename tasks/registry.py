"""Where the task families are: every module or package of ``tasks`` that declares ``FAMILY = FamilySpec(...)``.

Adding a family is writing its module (``tasks/<name>.py`` or ``tasks/<name>/``) with that one line;
nothing else lists the families. ``registered_families()`` imports each module of ``tasks`` once
(``base``, ``registry``, ``kit`` and private names are not families) and collects their specs by name.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from tasks.base import FamilySpec

NOT_FAMILIES = frozenset({"base", "registry", "kit"})
"""Modules of ``tasks`` that hold shared code, not a family."""


@cache
def registered_families() -> dict[str, FamilySpec]:
    """Every family's spec, by family name, in module order; ``ValueError`` on two families of one name."""
    found: dict[str, FamilySpec] = {}
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name.startswith("_") or module.name in NOT_FAMILIES:
            continue
        spec = getattr(importlib.import_module(f"tasks.{module.name}"), "FAMILY", None)
        if not isinstance(spec, FamilySpec):
            continue
        if spec.name in found:
            raise ValueError(f"two task families are named {spec.name!r}")
        found[spec.name] = spec
    return found


def family_spec(name: str) -> FamilySpec | None:
    """The spec of the family called ``name`` (``TaskInstance.family``), ``None`` when none is registered."""
    return registered_families().get(name)
