"""A task family from outside ctxbench, as a template to copy (examples/task_template/README.md).

``task=tally_task:Tally`` runs it by class path; the package's ``pyproject.toml`` also registers it as the
entry point ``tally`` (group ``ctxbench.tasks``) for ``task=tally`` once installed.
"""

from tally_task.family import Tally, TallyInstance

__all__ = ["Tally", "TallyInstance"]
