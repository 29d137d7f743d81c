"""Model backends. ``scripted`` is the reference agent (no LLM)."""
from harness.models.base import Completion, ContextOverflowError, Model, ModelError, PreflightError, Usage

__all__ = ["Completion", "ContextOverflowError", "Model", "ModelError", "PreflightError", "Usage"]
