"""The Hydra plugin that registers ctxbench's resolvers: Hydra imports this module while discovering plugins.

Registering happens at import, so a plain ``hydra.compose`` of ``configs/`` (a notebook, a script that does
not import ``harness``) resolves ``${ctxbench_exclude_keys:}``, ``${ctxbench_dirname:...}`` and
``${ctxbench_run:}``. The search path plugin itself changes nothing: it is what makes this module a plugin.
"""

from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin

from hydra_plugins.ctxbench_resolvers.resolvers import register_resolvers

register_resolvers()


class CtxbenchResolversSearchPathPlugin(SearchPathPlugin):
    """A plugin that leaves the search path as it is; importing its module registers ctxbench's resolvers."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        """Leave ``search_path`` unchanged (the configs are found where the caller points Hydra)."""
