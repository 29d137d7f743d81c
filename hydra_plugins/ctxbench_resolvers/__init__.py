"""ctxbench's OmegaConf resolvers as a Hydra plugin, so that ``configs/`` composes with plain Hydra.

Hydra imports every module under the ``hydra_plugins`` namespace package but those named ``_*`` when it
discovers its plugins (``hydra.core.plugins.Plugins``); ``ctxbench_resolvers.py`` registers the resolvers as it
is imported, before any config is composed. The resolvers themselves are in ``resolvers.py``; the run folder's
naming that ``${ctxbench_run:}`` computes is in ``_naming.py`` (a run's identity and hash, ``config_dict``) and
``_budget.py`` (token budgets), modules the scan does not execute again (resolvers.py says why).
Nothing here imports ``harness``: the harness imports these (``harness.budget``, ``harness.identity``,
``harness.config`` re-export them), so imports run one way (tests/test_import_graph.py checks it).
"""
