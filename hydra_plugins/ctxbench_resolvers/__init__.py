"""ctxbench's OmegaConf resolvers as a Hydra plugin, so that ``configs/`` composes with plain Hydra.

Hydra imports every module under the ``hydra_plugins`` namespace package when it discovers its plugins
(``hydra.core.plugins.Plugins``); ``ctxbench_resolvers.py`` registers the resolvers as it is imported,
before any config is composed. The resolvers themselves are in ``resolvers.py``, which imports nothing
from ``harness``; ``harness.config`` and ``harness.identity`` use them from there.
"""
