"""ctxbench's engine: CLI, agent loop, model backends, records, metrics, analysis, plots."""

__version__ = "0.1.0"
