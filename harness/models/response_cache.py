"""A response cache for paid runs (``cache_responses=true``): a rerun of a finished sweep is free.

``Cached`` wraps any model. Each call is keyed by a SHA-256 of the canonical JSON of:

- the model's request settings: its config (``_target_``, ``name``, model id, sampling parameters
  such as ``temperature``, ``seed``, ``max_tokens``, endpoint, ...) minus ``TRANSPORT_KEYS``, which
  change how a call is made but not what it answers (retries, timeouts, the body cap, key variable, concurrency);
- the exact messages and tool schemas sent;
- the sample the call belongs to: task instance, trial index, sub-agent task and run, and the
  n-th time this very request is sent in that session. Repeated trials are separate samples (a
  trial at temperature 0.7 is not a copy of the first), and a replay reproduces each call of the
  original run in order.

A hit returns the recorded reply with its recorded usage (as the backend reported it, so the
harness fills in the same tiktoken and simulated-cache figures) and ``from_cache=True``: the
step row records ``from_cache``, its ``cost`` as 0 and ``cost_uncached`` as what the call cost
when it was made. Errors are not cached: a call that failed is made again, and neither is a
reply that fault injection made up (``Completion.injected``; the cache sits inside the injector,
see ``harness.runner.wrap_model``, so it sees the real replies only and a fault setting cannot
shape a recorded reply).

Where: one SQLite file, by default ``results/cache/responses.sqlite`` (config key ``response_cache``),
shared by every run and sweep, so a rerun of a finished sweep in a new folder (or with ``--fresh``)
is served from it. Delete the file to forget everything. One connection per process behind a
lock (thread-safe with ``workers > 1``); WAL mode and a busy timeout let several processes (a
sweep's parallel launcher) share the file. Concurrent misses on one key both call the model; the
first answer written stays (``INSERT OR IGNORE``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from harness.models.base import Completion, Usage, current_request_options, session_for, subagent_session

DEFAULT_PATH = Path("results") / "cache" / "responses.sqlite"
TRANSPORT_KEYS = (
    "retry",
    "timeout",
    "max_response_bytes",
    "api_key_env",
    "max_concurrency",
    "cache_profile",
    "startup_timeout",
)
SCHEMA = """CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    completion TEXT NOT NULL,
    created_at REAL NOT NULL
)"""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces (non-JSON values as ``str``): equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_settings(spec: dict) -> dict:
    """The part of a model's config that decides its replies (``spec`` minus ``TRANSPORT_KEYS``)."""
    return {k: v for k, v in spec.items() if k not in TRANSPORT_KEYS}


def request_key(settings: dict, sample: list, occurrence: int, messages: list[dict], tools: list[dict]) -> str:
    """The cache key of one call: SHA-256 of its settings, sample, occurrence, messages and tools."""
    text = canonical_json({"model": settings, "sample": sample, "n": occurrence, "messages": messages, "tools": tools})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encode_completion(completion: Completion) -> str:
    """A completion as JSON text: every field (a backend may add some) but ``from_cache``.

    ``usage`` is stored field by field; any other field that is not plain JSON is left out
    (``raw`` from an SDK object, for instance).
    """
    data: dict[str, Any] = {"usage": asdict(completion.usage)}
    for spec in fields(completion):
        if spec.name in ("usage", "from_cache", "injected"):
            continue
        value = getattr(completion, spec.name)
        try:
            data[spec.name] = json.loads(json.dumps(value))
        except (TypeError, ValueError):
            data[spec.name] = None
    return json.dumps(data, ensure_ascii=False)


def decode_completion(text: str) -> Completion:
    """The recorded completion, marked ``from_cache`` (fields this version does not know are ignored)."""
    data = json.loads(text)
    usage_fields = {spec.name for spec in fields(Usage)}
    usage = Usage(**{k: v for k, v in data.pop("usage", {}).items() if k in usage_fields})
    known = {spec.name for spec in fields(Completion)} - {"usage", "from_cache", "injected"}
    return Completion(usage=usage, from_cache=True, **{k: v for k, v in data.items() if k in known})


class ResponseStore:
    """The SQLite file of recorded responses (thread-safe: one connection behind a lock).

    Parameters:
        path: the file (its folder is created).
    """

    def __init__(self, path: str | Path = DEFAULT_PATH) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(SCHEMA)
        self.hits = self.misses = self.writes = 0

    def get(self, key: str) -> Completion | None:
        """The recorded completion under ``key``, or ``None``."""
        with self._lock:
            row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return decode_completion(row[0])

    def put(self, key: str, model: str, completion: Completion) -> None:
        """Record ``completion`` under ``key`` (a key already recorded keeps its first answer)."""
        text = encode_completion(completion)
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses (key, model, completion, created_at) VALUES (?, ?, ?, ?)",
                (key, model, text, time.time()),
            )
            self.writes += 1

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


class Cached:
    """Replay recorded responses of the wrapped model; record the new ones (see the module docstring).

    Parameters:
        inner: the wrapped model.
        store: the ``ResponseStore`` shared by every session of the run.
        settings: the model's request settings (``request_settings(spec)``), part of every key.
        sample: the sample this session belongs to (empty for the bare model).
    """

    def __init__(self, inner: Any, store: ResponseStore, settings: dict, sample: list | None = None) -> None:
        self.inner = inner
        self.store = store
        self.settings = settings
        self.sample = list(sample or [])
        self.name = inner.name
        self.context_window = inner.context_window
        self.is_reference = getattr(inner, "is_reference", False)
        self.label = getattr(inner, "label", "")
        self._seen: Counter[str] = Counter()

    def for_trial(self, instance: Any, trial: int = 0) -> "Cached":
        """The per-trial session: its calls are keyed by the instance and the trial index."""
        sample = [str(getattr(instance, "id", instance)), int(trial)]
        return Cached(session_for(self.inner, instance, trial), self.store, self.settings, sample)

    def for_subtask(self, instance: Any, task: str, trial: int = 0, run: int = 1) -> "Cached":
        """A sub-agent's session: keyed by the instance, trial, sub-task and run."""
        sample = [str(getattr(instance, "id", instance)), int(trial), "subtask", task, int(run)]
        return Cached(subagent_session(self.inner, instance, task, trial, run), self.store, self.settings, sample)

    def key(self, messages: list[dict], tools: list[dict]) -> str:
        """The key of this call (counting how often this session sent the same request before). A strategy's
        request options (``models.base.current_request_options``: server-side context management) change what
        the server does with the request, so they are part of the key."""
        options = current_request_options()
        settings = {**self.settings, "request_options": options} if options else self.settings
        base = request_key(settings, self.sample, 0, messages, tools)
        occurrence = self._seen[base]
        self._seen[base] += 1
        return base if occurrence == 0 else request_key(settings, self.sample, occurrence, messages, tools)

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """The recorded reply to this request, else the inner model's (then recorded)."""
        key = self.key(messages, tools)
        started = time.perf_counter()
        hit = self.store.get(key)
        if hit is not None:
            hit.latency_s = time.perf_counter() - started
            return hit
        completion = self.inner.complete(messages, tools)
        if not getattr(completion, "injected", False):  # a reply made up by fault injection is never recorded
            self.store.put(key, self.name, completion)
        return completion
