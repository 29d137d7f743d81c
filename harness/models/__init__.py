"""Model backends. The reference agent (``model=scripted``, no LLM) is the ``reference_agent`` package."""

from harness.models.base import Completion, ContextOverflowError, Model, ModelError, PreflightError, Usage

__all__ = ["Completion", "ContextOverflowError", "Model", "ModelError", "PreflightError", "Usage"]
