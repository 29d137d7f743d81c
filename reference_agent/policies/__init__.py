"""The reference policy of every task family, and how the scripted agent finds the one for an instance.

One module per family (``code_review`` has two helpers beside its own: ``code_review_patterns``,
the bug patterns a reviewer spots, and ``code_review_ledger``, its ledger). A policy acts only
on the messages it is given (``Policy``). A family names its policy in its registration
(``FamilySpec.policy`` in ``tasks``, an import path: ``tasks`` never imports this package), and
``FACTORIES`` (family name -> factory) is built from those registrations. ``reference_policy(instance)``
gives a fresh policy for one trial: the family's from ``FACTORIES`` (keyed by ``TaskInstance.family``),
else the instance's own ``reference_policy()`` (a family from a plugin may ship one), else the default
policy (``default.EmptyAnswerPolicy``: it submits an empty answer, so its numbers mean little).

Decision (issue 37): a *run* uses the default policy only for a family registered in ``tasks`` whose
``FamilySpec`` names no policy. A family from outside the repository (not registered) with no
``reference_policy()`` is refused before the first trial: ``ScriptedModel.check_task`` raises
``PreflightError`` with ``missing_policy_line``, which the runner reports as one line, exit code 2, and no
run folder is left. ``reference_policy`` itself still falls back to the default for any instance (the dry
run's estimate and tests call it directly); ``policy_source`` says which of the three it would use.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Protocol

from reference_agent.policies.default import EmptyAnswerPolicy
from tasks.base import FamilySpec, TaskInstance
from tasks.registry import registered_families


class Policy(Protocol):
    """A reference policy for the scripted agent.

    It must act only on the messages it is given (the prepared request), never on the
    instance's hidden state beyond what a competent agent would know from its prompt.
    """

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Return the next assistant message (``content`` and/or ``tool_calls``)."""

    def summarize(self, history_text: str) -> str:
        """Summarize a rendered history in the seed's four-part template."""


def load_policy_class(path: str) -> Callable[..., Policy]:
    """The class an import path ``package.module:Class`` names."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def policy_factory(spec: FamilySpec) -> Callable[[Any], Policy]:
    """A factory of fresh policies for ``spec``'s family: its policy class, called with the instance attributes
    that ``spec.policy_args`` names (``spec.policy`` must be set)."""
    assert spec.policy is not None, spec.name
    policy_class = load_policy_class(spec.policy)
    return lambda instance: policy_class(**{arg: getattr(instance, arg) for arg in spec.policy_args})


FACTORIES: dict[str, Callable[[Any], Policy]] = {
    name: policy_factory(spec) for name, spec in registered_families().items() if spec.policy is not None
}
"""Family name -> a fresh reference policy for one trial of an instance of it (from the families' registrations)."""


def policy_source(instance: TaskInstance) -> str | None:
    """Where ``reference_policy(instance)`` gets the policy: ``"family"`` (its registration's ``FamilySpec.policy``),
    ``"instance"`` (its own ``reference_policy()``), ``"default"`` (a registered family that names none) or
    ``None`` (a family from outside the repository with neither: a run refuses it)."""
    if instance.family in FACTORIES:
        return "family"
    if callable(getattr(instance, "reference_policy", None)):
        return "instance"
    if instance.family in registered_families():
        return "default"
    return None


def missing_policy_line(family: str) -> str:
    """The one line that refuses ``model=scripted`` on a family without a reference policy, and says what to do."""
    return (
        f"model=scripted cannot run task family {family}: it has no reference policy; give its TaskInstance a "
        "reference_policy() method (or, for a family in tasks/, a FamilySpec.policy; docs/new_task.md), "
        "or run it with model=relay or a real backend (docs/backends.md)"
    )


def reference_policy(instance: TaskInstance) -> Policy:
    """A fresh reference policy for one trial of ``instance``: its family's, the instance's own, or the default."""
    source = policy_source(instance)
    if source == "family":
        return FACTORIES[instance.family](instance)
    if source == "instance":
        return instance.reference_policy()  # type: ignore[attr-defined]  # a plugin family's own (policy_source)
    return EmptyAnswerPolicy()
