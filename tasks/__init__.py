"""Task families. The contract lives in ``tasks.base``."""
