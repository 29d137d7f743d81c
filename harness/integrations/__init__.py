"""Bridges from ctxbench to other harnesses (optional extras; the core never imports them).

- ``harness.integrations.inspect``: any ctxbench strategy as an inspect_ai ``CompactionStrategy``
  (``pip install -e ".[inspect]"``).
"""
