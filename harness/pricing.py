"""Prices of model calls: USD per 1M tokens for input, cached input, cache writes and output.

Two sources, chosen with ``pricing=``:

- ``auto`` (the default): the price database ``genai-prices`` (pydantic's maintained price data,
  bundled with the installed package), keyed by the model the backend reports (the response's
  model name, else the configured model id). Only the bundled data is read: the package's optional
  auto-update from the network is never started, and every lookup goes through a snapshot of the
  bundled data made here. The reference agent is not an LLM: ``auto`` prices its calls as those of a
  named representative model, ``REPRESENTATIVE_MODEL`` (the database's prices of ``gpt-4.1-mini``,
  fixed for the run), so that an offline run's cost is never silently 0; the run header and every
  row's ``price_source`` say so, and ``pricing=none`` prices nothing.
- a profile of ``configs/pricing/`` (``openai-like``, ``anthropic-like``, ...): fixed prices, an
  explicit override. One warning line says when it disagrees with the database's price of the
  configured model by more than ``DISAGREE_SHARE``.

Every trial row records where its prices came from in ``price_source`` (``genai-prices 0.2.3
openai/gpt-4.1-mini``, ``pricing=openai-like``).
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import sys
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

DATABASE = "genai-prices"
AUTO = "auto"
NONE = "none"
REFERENCE_SOURCE = "none: the reference agent is not an LLM"  # its price when the database lacks the representative
# auto's price of the reference agent (not an LLM): this model's database prices. gpt-4.1-mini is the ``openai``
# preset's model (configs/model/openai.yaml), a provider whose cache the reference agent's default cache profile
# (``openai``) simulates: cache reads at a quarter of the input price, no cache-write premium. Its prices are
# those of the ``openai-mini-like`` profile.
REPRESENTATIVE_MODEL = "gpt-4.1-mini"
REPRESENTATIVE_URL = "https://api.openai.com/v1"  # pins the provider the model is looked up at
REPRESENTATIVE_NOTE = "(representative: the reference agent is not an LLM)"
LOCAL_SOURCE = "none: a model served on this machine, not in genai-prices"
REFERENCE_TARGETS = ("reference_agent.",)  # the reference agent's model classes (reference_agent/scripted.py)
LOCAL_TARGETS = ("harness.models.local.",)  # backends that start their own server on this machine
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
DISAGREE_SHARE = 0.20  # an override that differs from the database by more than this share gets a warning
PRICE_FIELDS = ("input", "cached_input", "cache_write", "output")
DATABASE_KEYS = {
    "input": "input_mtok",
    "cached_input": "cache_read_mtok",
    "cache_write": "cache_write_mtok",
    "output": "output_mtok",
}
CALL_KINDS = ("agent", "summarizer", "subagent", "stop_hook")
log = logging.getLogger("ctxbench")
_warned: set[str] = set()


def warn(line: str) -> None:
    """Print ``warning: LINE`` once per process on stderr and in the run's log."""
    if line in _warned:
        return
    _warned.add(line)
    print(f"warning: {line}", file=sys.stderr, flush=True)
    if log.hasHandlers():  # a run's ctxbench.log (without one, logging would print the line a second time)
        log.warning("%s", line)


@dataclass(frozen=True)
class Pricing:
    """Fixed per-1M-token prices: a profile of ``configs/pricing/``, or one model's entry in the database.

    Parameters:
        name: the ``pricing`` recorded with every cost figure (``none`` prices everything at 0).
        input: USD per 1M uncached input tokens.
        cached_input: USD per 1M input tokens served from the prefix cache (cache reads).
        output: USD per 1M output tokens (reasoning tokens included).
        cache_write: USD per 1M input tokens written to the cache (Anthropic's
            ``cache_creation_input_tokens``, at a premium over ``input``); ``None`` prices them as
            plain input, as a provider that caches for free does.
        source: where the prices come from (``pricing=NAME`` when not given).
    """

    name: str = NONE
    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0
    cache_write: float | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if not self.source:
            object.__setattr__(self, "source", f"pricing={self.name}")

    def cost(self, prompt_tokens: int, cached_tokens: int, output_tokens: int, cache_write_tokens: int = 0) -> float:
        """USD cost of one call; ``cache_write_tokens`` are part of ``prompt_tokens``, not cached."""
        cached, writes = split_input(prompt_tokens, cached_tokens, cache_write_tokens)
        uncached = max(prompt_tokens - cached - writes, 0)
        write_price = self.input if self.cache_write is None else self.cache_write
        return (
            uncached * self.input + cached * self.cached_input + writes * write_price + output_tokens * self.output
        ) / 1e6

    def price_for(self, kind: str = "agent", reported_model: str | None = None) -> "Pricing":
        """The prices of one call of ``kind`` (fixed prices: the same whatever the model)."""
        return self

    def per_million(self) -> dict[str, float | None]:
        """``input``, ``cached_input``, ``cache_write`` and ``output``, USD per 1M tokens."""
        return {key: getattr(self, key) for key in PRICE_FIELDS}


def split_input(prompt_tokens: int, cached_tokens: int, cache_write_tokens: int) -> tuple[int, int]:
    """The cached and cache-write parts of a call's input, each within what the prompt holds."""
    cached = min(max(cached_tokens, 0), max(prompt_tokens, 0))
    writes = min(max(cache_write_tokens, 0), max(prompt_tokens - cached, 0))
    return cached, writes


@dataclass(frozen=True)
class DatabasePrice(Pricing):
    """One model's prices from genai-prices. Each call is priced by the database's own calculation with
    the prices in force when it is made (price tiers by prompt length, dated and time-of-day prices
    included); the per-1M fields are the base prices in force at the lookup, for display."""

    model_info: Any = field(default=None, compare=False, repr=False)

    def cost(self, prompt_tokens: int, cached_tokens: int, output_tokens: int, cache_write_tokens: int = 0) -> float:
        """USD cost of one call, from genai-prices' ``ModelPrice.calc_price``."""
        from genai_prices import Usage

        cached, writes = split_input(prompt_tokens, cached_tokens, cache_write_tokens)
        usage = Usage(
            input_tokens=max(prompt_tokens, 0),
            cache_read_tokens=cached,
            cache_write_tokens=writes,
            output_tokens=max(output_tokens, 0),
        )
        model_price = self.model_info.get_prices(datetime.now(timezone.utc))
        return float(model_price.calc_price(usage)["total_price"])


# ---------------------------------------------------------------- the database


def database_version() -> str:
    """The installed genai-prices version: the version of its bundled price data."""
    return importlib.metadata.version(DATABASE)


@functools.cache
def _snapshot() -> Any:
    """A snapshot of the price data bundled with genai-prices (never the network's)."""
    # imported on first use: the bundled data is large (about 0.25 s to load), and a run under a profile never needs it
    from genai_prices.data import providers
    from genai_prices.data_snapshot import DataSnapshot

    return DataSnapshot(providers=providers, from_auto_update=False)


def _find(model_ref: str, base_url: str | None) -> tuple[Any, Any] | None:
    """The database's provider and model for ``model_ref`` (the endpoint's provider first), or ``None``."""
    snapshot = _snapshot()
    attempts = [(None, base_url)] if base_url else []
    for provider_id, url in attempts + [(None, None)]:
        try:
            return snapshot.find_provider_model(model_ref, None, provider_id, url)
        except LookupError:
            continue
    return None


def _number(value: Any) -> float | None:
    """A database price as a float (a tiered price: its base); ``None`` when not set."""
    if value is None:
        return None
    return float(getattr(value, "base", value))


@functools.lru_cache(maxsize=256)
def lookup(model_ref: str, base_url: str | None = None) -> DatabasePrice | None:
    """The database's current prices of ``model_ref`` (``None`` when it does not know the model).

    A model without a cache-read price is priced as if cache reads cost plain input.
    """
    found = _find(str(model_ref), base_url)
    if found is None:
        return None
    provider, model = found
    model_price = model.get_prices(datetime.now(timezone.utc))
    prices = {key: _number(getattr(model_price, db_key)) for key, db_key in DATABASE_KEYS.items()}
    base = prices["input"] or 0.0
    return DatabasePrice(
        name=AUTO,
        input=base,
        cached_input=base if prices["cached_input"] is None else prices["cached_input"],
        output=prices["output"] or 0.0,
        cache_write=prices["cache_write"],
        model_info=model,
        source=f"{DATABASE} {database_version()} {provider.id}/{model.id}",
    )


def unknown_price(model_ref: str) -> Pricing:
    """The no-price of a model the database does not know (its calls cost 0)."""
    return Pricing(name=AUTO, source=f"{DATABASE} {database_version()}: unknown model {model_ref} (cost 0)")


# ---------------------------------------------------------------- pricing=auto


@dataclass(frozen=True)
class ModelRef:
    """What ``auto`` knows of a configured model: its database key and endpoint, whether it is the
    reference agent (no LLM), and whether it is served on this machine (no per-token price)."""

    ref: str | None
    base_url: str | None = None
    reference: bool = False
    local: bool = False


def model_ref(spec: Mapping[str, Any] | None) -> ModelRef | None:
    """The database key of a model config (its ``model`` id, else its ``name``); ``None`` without a spec."""
    if not spec:
        return None
    target = str(spec.get("_target_") or "")
    if target.startswith(REFERENCE_TARGETS):
        return ModelRef(None, reference=True)
    ref = spec.get("model") or spec.get("name")
    base_url = str(spec.get("base_url") or "") or None
    return ModelRef(str(ref) if ref else None, base_url, local=target.startswith(LOCAL_TARGETS) or is_local(base_url))


def is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` is an endpoint on this machine (loopback)."""
    if not base_url:
        return False
    try:
        host = urllib.parse.urlsplit(base_url).hostname or ""
    except ValueError:
        return False
    return host in LOCAL_HOSTS or host.startswith("127.")


class AutoPricing:
    """``pricing=auto``: each call priced from the database by the model that made it.

    ``models`` maps a kind of call to its configured model: ``agent`` (also sub-agents and the stop
    hook) and ``summarizer``. A call is priced by the model name its reply reports, else by its
    kind's configured model; a model the database does not know costs 0, with one warning line
    (none for a model served on this machine).
    The per-1M fields and ``source`` are the agent's.
    """

    name = AUTO

    def __init__(self, models: Mapping[str, ModelRef]) -> None:
        self.models = dict(models)
        self.agent = self.price_for("agent")

    def __reduce__(self) -> tuple:
        return AutoPricing, (self.models,)

    def configured(self, kind: str) -> ModelRef:
        """The configured model of ``kind`` (the agent's for every kind but a configured summarizer)."""
        return self.models.get(kind) or self.models["agent"]

    def price_for(self, kind: str = "agent", reported_model: str | None = None) -> Pricing:
        """The prices of one call of ``kind`` whose reply reports ``reported_model`` (``None``: not reported).

        The reported name comes first; one the database does not know falls back to the configured model.
        """
        configured = self.configured(kind)
        if configured.reference and not reported_model:
            return reference_price()
        refs = [str(r) for r in dict.fromkeys((reported_model, configured.ref)) if r]
        for ref in refs:
            price = lookup(ref, configured.base_url)
            if price is not None:
                return price
        if configured.local:  # a local server's calls cost nothing per token
            return Pricing(name=AUTO, source=LOCAL_SOURCE)
        names = " / ".join(refs) or "?"
        warn(
            f"pricing=auto: model {names} is not in {DATABASE} {database_version()}: its calls cost 0 "
            "(choose a profile with pricing=NAME to price them)"
        )
        return unknown_price(names)

    def cost(self, prompt_tokens: int, cached_tokens: int, output_tokens: int, cache_write_tokens: int = 0) -> float:
        """USD cost of one agent call of the configured model."""
        return self.agent.cost(prompt_tokens, cached_tokens, output_tokens, cache_write_tokens)

    def per_million(self) -> dict[str, float | None]:
        """The agent's prices, USD per 1M tokens."""
        return self.agent.per_million()

    @property
    def source(self) -> str:
        """Where the agent's prices come from."""
        return self.agent.source

    def __getattr__(self, key: str) -> Any:
        if key in PRICE_FIELDS:  # input, cached_input, cache_write, output: the agent's
            return getattr(self.__dict__["agent"], key)
        raise AttributeError(key)


@dataclass(frozen=True)
class RepresentativePrice(Pricing):
    """``auto``'s price of the reference agent: the database's per-1M prices of ``REPRESENTATIVE_MODEL``,
    fixed for the run (the same config gives the same records). ``priced_as`` is the database's
    provider/model (``openai/gpt-4.1-mini``)."""

    priced_as: str = ""


@functools.cache
def reference_price() -> Pricing:
    """``auto``'s price of the reference agent (not an LLM): that of the representative model, recorded as
    ``pricing: auto`` with ``price_source`` ``genai-prices 0.2.5 openai/gpt-4.1-mini (representative: ...)``.
    Without the model in the installed database: no price (cost 0, ``REFERENCE_SOURCE``), with one warning line.
    """
    found = lookup(REPRESENTATIVE_MODEL, REPRESENTATIVE_URL)
    if found is None:
        warn(
            f"pricing=auto: the representative model {REPRESENTATIVE_MODEL} is not in {DATABASE} "
            f"{database_version()}: the reference agent's calls cost 0 (choose a profile with pricing=NAME)"
        )
        return Pricing(name=NONE, source=REFERENCE_SOURCE)
    return RepresentativePrice(
        name=AUTO,
        input=found.input,
        cached_input=found.cached_input,
        output=found.output,
        cache_write=found.cache_write,
        source=f"{found.source} {REPRESENTATIVE_NOTE}",
        priced_as=found.source.removeprefix(f"{DATABASE} {database_version()} "),
    )


def header(pricing: Any) -> str:
    """The run header's pricing: its name, and for the reference agent under ``auto`` the model it is priced
    as (``auto -> priced as openai/gpt-4.1-mini (representative: ...; pricing=none to turn off)``)."""
    agent = pricing.agent if isinstance(pricing, AutoPricing) else pricing
    if isinstance(agent, RepresentativePrice):
        return (
            f"{pricing.name} -> priced as {agent.priced_as} "
            "(representative: the reference agent is not an LLM; pricing=none to turn off)"
        )
    return str(pricing.name)


# ---------------------------------------------------------------- from the config


def pricing_from(
    node: Mapping[str, Any] | None,
    model_spec: Mapping[str, Any] | None,
    summarizer_spec: Mapping[str, Any] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Pricing | AutoPricing:
    """The pricing of a run: ``node`` (the ``pricing`` group: ``auto``, or a profile) for its models.

    ``auto`` of a run whose every model is the reference agent is the representative model's fixed prices
    (``reference_price``).
    A profile is checked against the database's price of the configured agent model
    (``on_warning``, by default ``warn``, gets the line when they disagree). A bad profile raises ``TypeError``.
    """
    data = dict(node or {})
    agent = model_ref(model_spec) or ModelRef(None)
    summarizer = model_ref(summarizer_spec)
    if data.get("name", NONE) == AUTO and len(data) == 1:
        models = {"agent": agent, **({"summarizer": summarizer} if summarizer else {})}
        if all(m.reference for m in models.values()):
            return reference_price()
        return AutoPricing(models)
    if data.get("name") == AUTO:
        raise TypeError("pricing=auto takes no prices (choose a profile to set them)")
    pricing = Pricing(**data)
    line = disagreement(pricing, agent)
    if line:
        (on_warning or warn)(line)
    return pricing


def disagreement(pricing: Pricing, agent: ModelRef) -> str | None:
    """One line when a priced profile differs from the database's price of ``agent`` by more than
    ``DISAGREE_SHARE`` in any of input, cached input, cache write or output (``None`` otherwise)."""
    if agent.reference or not agent.ref or not any(pricing.per_million().values()):
        return None
    known = lookup(agent.ref, agent.base_url)
    if known is None:
        return None
    ours, theirs = pricing.per_million(), known.per_million()
    apart = [key for key in PRICE_FIELDS if both_differ(ours[key], theirs[key])]
    if not apart:
        return None
    figures = ", ".join(f"{key} {ours[key]:.2f} vs {theirs[key]:.2f}" for key in apart)
    return (
        f"pricing={pricing.name} differs from {known.source} by more than {DISAGREE_SHARE:.0%} "
        f"(USD per 1M tokens: {figures}); pricing=auto prices the model from the database"
    )


def both_differ(ours: float | None, theirs: float | None) -> bool:
    """Whether both prices are known and ``ours`` ``differs`` from ``theirs``."""
    return ours is not None and theirs is not None and differs(ours, theirs)


def differs(ours: float, theirs: float) -> bool:
    """Whether ``ours`` is more than ``DISAGREE_SHARE`` away from ``theirs`` (relative to theirs)."""
    if theirs == 0:
        return ours != 0
    return abs(ours - theirs) / theirs > DISAGREE_SHARE


def price_line(pricing: Any) -> str:
    """``pricing: auto [genai-prices 0.2.3 openai/gpt-4.1-mini] (USD per 1M tokens: input 0.40, ...)``; a
    profile's source (``pricing=NAME``) is its name alone."""
    prices = pricing.per_million()
    writes = f", cache write {prices['cache_write']:.2f}" if prices.get("cache_write") is not None else ""
    source = pricing.source
    label = pricing.name if source == f"pricing={pricing.name}" else f"{pricing.name} [{source}]"
    return (
        f"pricing: {label} (USD per 1M tokens: input {prices['input']:.2f}, "
        f"cached input {prices['cached_input']:.2f}{writes}, output {prices['output']:.2f})"
    )
