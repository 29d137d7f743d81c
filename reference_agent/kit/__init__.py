"""Building blocks the family policies share: the ledger, cursor reading, incremental parsing, call limits."""
