"""The error types that cross module boundaries: each is reported as one line and exit code 2.

They live here, below every other module, so that a library module can raise them without
importing the command line or the runner (imports run one way: cli -> commands -> runner -> ... -> errors).
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A config problem; reported as one line, exit code 2, nothing written."""


class UsageError(ValueError):
    """Bad command-line input (an argument, a path, an override); reported as one line, exit code 2."""
