"""Context-management strategies. The contract lives in ``strategies.base``."""
