"""What every HTTP model backend does the same way: its API key, its preflight check and its endpoint probe.

``OpenAIModel`` and ``AnthropicModel`` differ in their SDKs, request shapes and error bodies, not in how
they find a key, refuse a missing one, or check that ``base_url`` answers; those live here once.
"""

from __future__ import annotations

import os
from typing import Any

from harness.models.base import ModelError, PreflightError
from harness.models.retry import retry_after_seconds


def api_key(explicit: str | None, env_name: str | None, no_key: str) -> str:
    """The key given explicitly, else the one in ``env_name``; ``no_key`` for keyless servers (no variable)."""
    if explicit is not None:
        return explicit
    if not env_name:
        return no_key
    key = os.environ.get(env_name)
    if not key:
        raise ModelError(f"the environment variable {env_name} (the API key) is not set")
    return key


def base_url(configured: str | None, env_name: str, default: str) -> str:
    """The endpoint as the provider SDKs choose it: ``model.base_url`` if set, else ``$env_name``, else ``default``.

    A trailing slash is dropped, so ``{base_url}/models`` is one well-formed URL.
    """
    chosen = configured or os.environ.get(env_name) or default
    return chosen.rstrip("/")


def check_key_variable(model: str, explicit: str | None, env_name: str | None) -> None:
    """Preflight: refuse, in one line, a key variable that is named but not set."""
    if explicit is None and env_name and not os.environ.get(env_name):
        raise PreflightError(
            f"model {model}: the environment variable {env_name} holding the API key "
            f"is not set (export {env_name}=... first)"
        )


def probe(
    model: str,
    base_url: str,
    url: str,
    headers: dict,
    httpx: Any,
    http_client: Any = None,
    env_name: str | None = None,
    timeout: float = 10.0,
) -> int:
    """GET ``url``; any HTTP answer counts as reachable, a 401 as a rejected key; returns the status."""
    try:
        if http_client is not None:
            response = http_client.get(url, headers=headers, timeout=timeout)
        else:
            with httpx.Client(timeout=timeout) as client:
                response = client.get(url, headers=headers)
    except Exception as exc:  # connection refused, DNS, timeout, bad URL
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PreflightError(f"model {model}: cannot reach {base_url} ({reason})") from None
    if response.status_code == 401:
        where = f" in {env_name}" if env_name else ""
        raise PreflightError(f"model {model}: {base_url} rejected the API key{where} (401)")
    return response.status_code


def retry_after(exc: BaseException) -> float | None:
    """The wait a failed response asked for (``Retry-After`` / ``retry-after-ms``), if any."""
    response = getattr(exc, "response", None)
    return retry_after_seconds(getattr(response, "headers", None)) if response is not None else None


def int_or_none(value: Any) -> int | None:
    """``int(value)``, or ``None`` for a missing or non-numeric usage figure."""
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None
