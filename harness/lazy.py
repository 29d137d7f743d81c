"""pandas and numpy, imported on first use.

``python -m harness`` loads the analysis modules at start, but only a run that finishes, ``report``,
``compare``, ``import`` and ``--dry-run`` compute with pandas. Importing pandas and numpy costs
about 0.22 s, half of the start-up of a command that ends early (``list``, ``--help``, bad input).
The analysis modules take ``pandas`` and ``numpy`` from here at run time (one stand-in each, shared)
and import the real modules for the type checker:

    if TYPE_CHECKING:
        import pandas as pd
    else:
        from harness.lazy import pandas as pd

``benchmarks/speed_targets.py --only startup`` measures the start-up.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module ``name`` and imports it on the first attribute access (thread-safe)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None
        self._lock = threading.Lock()

    def _load(self) -> ModuleType:
        """The imported module (imported once)."""
        with self._lock:
            if self._module is None:
                self._module = importlib.import_module(self._name)
            return self._module

    def __getattr__(self, attribute: str) -> Any:
        module = self._module if self._module is not None else self._load()
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<LazyModule {self._name!r}, {state}>"


pandas = LazyModule("pandas")
numpy = LazyModule("numpy")
