"""The experiment presets' tables and verdicts, one module per preset (benchmarks/experiments_table.py runs them).

``common``: trial loading and table formatting; ``claims``: the published claims (configs/claims/) and the one
verdict function; ``doc_blocks``: the ``<!-- table:NAME -->`` blocks of a markdown file; ``runner``: running the
presets; ``registry``: every table by name. The other modules hold one preset's tables each.
"""
