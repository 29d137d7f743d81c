"""``tally`` before its reference policy was written: what ``model=scripted`` says about such a family.

``task=tally_task.bare:BareTally`` with ``model=scripted`` stops before the first trial with one line and
exit code 2; ``model=relay`` or a real backend runs it (docs/new_task.md).
"""

from __future__ import annotations

from tally_task.family import Tally, TallyInstance


class BareTallyInstance(TallyInstance):
    """The tally instance without a ``reference_policy()``."""

    reference_policy = None  # type: ignore[assignment]


class BareTally(Tally):
    """The tally family whose instances have no reference policy."""

    def generate(self, seed: int) -> BareTallyInstance:
        """The same ledger as ``Tally.generate``, as a ``BareTallyInstance``."""
        instance = super().generate(seed)
        return BareTallyInstance(self, seed, instance.account, instance.rows)
