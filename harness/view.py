"""``python -m harness view RUN [TRIAL] [--out FILE]``: static HTML, one page per trial and an index.

``view RUN`` writes ``RUN/view/index.html`` (the trial list with outcomes, each linking to its
page; it sorts and filters by family, outcome and input tokens, ``index_controls``) and
``RUN/view/<trial>.html`` per trial (``--out FILE``: the index at FILE, the trial pages beside it),
so what a browser opens is one trial at a time (pages from ``file://`` cannot load other files, so
there is no loading on demand). ``view RUN TRIAL`` writes that trial's page alone
(``RUN/view-TRIAL.html``, or ``--out FILE``).

A trial page shows the token curve (harness/view_svg.py); per step the prepared request as the
model saw it, marked against the full history (harness/view_data.py: kept, cut, replaced,
offloaded, summary, inserted), the tool calls and results, strategy events and cache breaks. The
leading messages a request shares with the previous step's request (same refs, same marks, in
order) are one line naming them and linking to that step; the rest are listed. No server, no
network, no script library: long messages are folded into ``<details>`` (a few lines of inline
script only expand or collapse them all; on the index, ``INDEX_SCRIPT`` sorts and hides rows). A
message body is written in full once per page, where it first appears; later appearances show a
preview and link to it.
"""

from __future__ import annotations

import json
import sys
from html import escape
from pathlib import Path
from typing import Iterable

from harness.errors import UsageError
from harness.records import corruption_notes
from harness.view_data import CUT, KEPT, Slot, StepView, TrialView, load_run
from harness.view_svg import token_curve

PREVIEW = 160  # characters of a message shown before "show all"
RANGES_LIMIT = 160  # characters of the refs cut at earlier steps
BODY_LIMIT = 20_000  # characters of a message body written at all (the rest is counted)
CSS = """
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}
.ok{color:#176b17}.fail{color:#a31515}
section.trial{border-top:2px solid #444;margin-top:24px}
section.step{border-left:3px solid #ddd;margin:8px 0;padding-left:8px}
section.step.break{border-left-color:#e08a00}
.msg{margin:2px 0;padding:2px 4px;border-radius:3px}
.msg pre,.tool pre{white-space:pre-wrap;margin:2px 0;font-size:12px}
summary>pre{display:inline}
.mark{font-size:11px;padding:0 4px;border-radius:3px;margin-right:4px;color:#fff}
.m-kept{background:#888}.m-cut{background:#a31515}.m-replaced{background:#7a3fb0}
.m-offloaded{background:#1f6fb2}.m-summary{background:#176b17}.m-inserted{background:#c77700}
.msg.cut{text-decoration:line-through;opacity:.7}
.role{font-weight:bold}.ref{color:#666;font-family:monospace}
svg.curve text{font-size:10px;fill:#444}svg.curve .frame{fill:none;stroke:#bbb}
svg.curve .tokens{stroke:#1f6fb2;stroke-width:1.5}svg.curve .history{stroke:#aaa;stroke-dasharray:2 2}
svg.curve .budget{stroke:#a31515;stroke-dasharray:6 3}svg.curve .budget-label{fill:#a31515}
svg.curve .event{stroke:#2a9d2a;stroke-opacity:.35}svg.curve .point{fill:#1f6fb2}
svg.curve .break{fill:none;stroke:#e08a00;stroke-width:2}svg.curve .clip{fill:#555;font-style:italic}\
svg.curve .tick{stroke:#bbb}
.msg.same{color:#555;font-style:italic}nav{margin:4px 0}nav a{margin-right:12px}
.legend span{margin-right:12px}.event-line{color:#2a7d2a}.break-line{color:#b36b00}
"""
SCRIPT = """
function setAll(open){document.querySelectorAll('details').forEach(function(d){d.open=open;});}
"""
INDEX_SCRIPT = """
(function(){
var form=document.getElementById('filters'),body=document.querySelector('table.trials tbody');
if(!form||!body){return;}
var rows=Array.prototype.slice.call(body.rows),names=['family','outcome','min','max','sort','desc'];
function field(n){return form.elements[n];}
function num(v,none){return v===''||isNaN(Number(v))?none:Number(v);}
function value(r,k){return k==='tokens'||k==='order'?Number(r.dataset[k]):r.dataset[k];}
function apply(){
  var fam=field('family').value,out=field('outcome').value,lo=num(field('min').value,-Infinity),
      hi=num(field('max').value,Infinity),key=field('sort').value,dir=field('desc').checked?-1:1,shown=0;
  rows.slice().sort(function(a,b){
    var x=value(a,key),y=value(b,key),c=x<y?-1:x>y?1:0;
    return c?c*dir:Number(a.dataset.order)-Number(b.dataset.order);
  }).forEach(function(r){
    var t=Number(r.dataset.tokens),ok=(!fam||r.dataset.family===fam)&&(!out||r.dataset.outcome===out)&&t>=lo&&t<=hi;
    r.hidden=!ok;if(ok){shown++;}body.appendChild(r);
  });
  document.getElementById('f-count').textContent=shown+' of '+rows.length+' trials shown';
  var q=names.map(function(n){
    var e=field(n);return n+'='+encodeURIComponent(e.type==='checkbox'?(e.checked?'1':''):e.value);
  });
  try{history.replaceState(null,'','#'+q.join('&'));}catch(e){}
}
location.hash.replace(/^#/,'').split('&').forEach(function(p){
  var kv=p.split('='),e=names.indexOf(kv[0])>=0?field(kv[0]):null;
  if(!e){return;}var v=decodeURIComponent(kv[1]||'');
  if(e.type==='checkbox'){e.checked=v==='1';}else{e.value=v;}
});
form.addEventListener('input',apply);form.addEventListener('change',apply);apply();
})();
"""


def _text(message: dict) -> str:
    """A message's content as text, with its tool calls appended."""
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False) if content else ""
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        text += f"\n→ {fn.get('name')}({fn.get('arguments', '')})"
    return text.strip()


def _body(text: str) -> str:
    """``<pre>`` of the text, folded behind a preview when long, cut at ``BODY_LIMIT``."""
    if len(text) <= PREVIEW:
        return f"<pre>{escape(text)}</pre>"
    shown = text[:BODY_LIMIT]
    more = f"\n… {len(text) - BODY_LIMIT:,} more characters not written" if len(text) > BODY_LIMIT else ""
    return (
        f"<details><summary><pre>{escape(text[:PREVIEW])}… ({len(text):,} chars, show all)</pre></summary>"
        f"<pre>{escape(shown + more)}</pre></details>"
    )


class Renderer:
    """Writes the HTML of trials; remembers which message bodies it already wrote."""

    def __init__(self) -> None:
        self.shown: set[str] = set()

    def message(self, trial: str, slot: Slot, classes: str = "msg") -> str:
        """One message with its mark; full body the first time, a preview and a link after."""
        anchor = f"{trial}-{slot.ref}"
        role = escape(str(slot.message.get("role", "?")))
        tool = f" {escape(str(slot.message['_tool']))}" if slot.message.get("_tool") else ""
        stands = ""
        if slot.stands_for:
            verb = "replaced by" if "cut" in classes.split() else "stands for"
            stands = f' <span class="ref">({verb} <a href="#{trial}-{slot.stands_for}">{slot.stands_for}</a>)</span>'
        head = (
            f'<span class="mark m-{slot.mark}">{slot.mark}</span><span class="ref">{slot.ref}</span> '
            f'<span class="role">{role}</span>{tool}{stands}'
        )
        text = _text(slot.message)
        if slot.ref in self.shown:
            preview = escape(text[:PREVIEW].replace("\n", " ")) + ("…" if len(text) > PREVIEW else "")
            return (
                f'<div class="{classes}" data-mark="{slot.mark}">{head} <a href="#{anchor}">↑</a> '
                f'<span class="ref">{preview}</span></div>'
            )
        self.shown.add(slot.ref)
        return f'<div class="{classes}" id="{escape(anchor)}" data-mark="{slot.mark}">{head}{_body(text)}</div>'

    def step(
        self, trial: TrialView, anchor: str, view: StepView, previous: set[str], before: StepView | None = None
    ) -> str:
        """One step section: header, events, request (what it shares with ``before`` as one line), newly cut
        messages, tool calls."""
        row = view.row
        over = " over budget" if row.get("over_budget") else ""
        brk = (
            f' <span class="break-line">cache break: {escape(str(view.cache_break))}</span>' if view.cache_break else ""
        )
        counts = _mark_counts(view.request)
        parts = [
            f'<section class="step{" break" if view.cache_break else ""}" id="{anchor}-s{view.index}" '
            f'data-step="{view.step}">',
            f"<h4>step {view.step}: {view.tokens or 0:,} request tokens{over}; history {view.history_size} messages"
            f" ({row.get('history_tokens', '?')} tokens); request {len(view.request)} messages ({counts}){brk}</h4>",
        ]
        for event in view.events:
            parts.append(f'<div class="event-line">{escape(_event_line(event))}</div>')
        parts.append("<details open><summary>prepared request</summary>")
        shared = _shared_prefix(before.request, view.request) if before is not None else 0
        if before is not None and shared:  # shared is 0 without a step before
            parts.append(_shared_line(anchor, before, view.request[:shared]))
        parts.extend(self.message(anchor, slot) for slot in view.request[shared:])
        parts.append("</details>")
        parts.append(self._cut(anchor, view, previous))
        if view.tools:
            parts.append("<div><b>tool calls</b></div>")
            parts.extend(self._tool(anchor, trial, event) for event in view.tools)
        parts.append("</section>")
        return "\n".join(parts)

    def _cut(self, anchor: str, view: StepView, previous: set[str]) -> str:
        """The history messages this request lacks: the newly cut ones in full, the rest as refs."""
        if not view.cut:
            return ""
        new = [slot for slot in view.cut if slot.ref in previous or slot.ref not in self.shown]
        new_refs = {slot.ref for slot in new}
        old = [slot.ref for slot in view.cut if slot.ref not in new_refs]
        lines = [
            f'<details class="cut-list"><summary>cut from the history: {len(view.cut)} messages '
            f"({len(new)} newly)</summary>"
        ]
        lines.extend(self.message(anchor, slot, "msg cut") for slot in new)
        if old:
            lines.append(f'<div class="ref">{len(old)} cut earlier: {escape(_short_ranges(old))}</div>')
        lines.append("</details>")
        return "\n".join(lines)

    def _tool(self, anchor: str, trial: TrialView, event: dict) -> str:
        """One tool call: name, arguments, error flag, and its result (the message)."""
        args = escape(json.dumps(event.get("args"), ensure_ascii=False)[:400])
        error = ' <span class="fail">error</span>' if event.get("is_error") else ""
        ref = event.get("ref")
        result = trial.messages.get(ref, {}) if ref else {}
        link = f' → <a href="#{anchor}-{ref}">{ref}</a>' if ref else ""
        text = _text(result)
        preview = escape(text[:PREVIEW].replace("\n", " ")) + ("…" if len(text) > PREVIEW else "")
        return (
            f'<div class="tool"><b>{escape(str(event.get("name")))}</b>(<code>{args}</code>){error}{link}'
            f' <span class="ref">{preview}</span></div>'
        )


def _shared_line(anchor: str, before: StepView, shared: list[Slot]) -> str:
    """The one line for the ``shared`` leading messages of a request: as at the step ``before``."""
    return (
        f'<div class="msg same">the first {len(shared)} messages as at '
        f'<a href="#{anchor}-s{before.index}">step {before.step}</a> ({_mark_counts(shared)}): '
        f"{escape(_short_ranges(slot.ref for slot in shared))}</div>"
    )


def _mark_counts(slots: Iterable[Slot]) -> str:
    """``3 kept, 1 inserted``: how many slots carry each mark, in order of first appearance."""
    counts: dict[str, int] = {}
    for slot in slots:
        counts[slot.mark] = counts.get(slot.mark, 0) + 1
    return ", ".join(f"{n} {mark}" for mark, n in counts.items())


def _short_ranges(refs: Iterable[str]) -> str:
    """``_ranges`` of ``refs``, cut at a comma within ``RANGES_LIMIT`` characters (then ``, …``)."""
    ranges = _ranges(refs)
    return ranges if len(ranges) <= RANGES_LIMIT else ranges[:RANGES_LIMIT].rsplit(",", 1)[0] + ", …"


def _shared_prefix(before: list[Slot], now: list[Slot]) -> int:
    """How many leading slots ``now`` shares with ``before`` (same ref and mark)."""
    n = 0
    for a, b in zip(before, now, strict=False):
        if a.ref != b.ref or a.mark != b.mark:
            break
        n += 1
    return n


def _ranges(refs: Iterable[str]) -> str:
    """``m3-m7, m9``: refs compressed into runs of consecutive numbers."""
    numbers = sorted(int(r[1:]) for r in refs if r[1:].isdigit())
    runs: list[str] = []
    for n in numbers:
        if runs and runs[-1].endswith(f"m{n - 1}") and "-" in runs[-1]:
            runs[-1] = runs[-1].rsplit("-", 1)[0] + f"-m{n}"
        elif runs and runs[-1] == f"m{n - 1}":
            runs[-1] += f"-m{n}"
        else:
            runs.append(f"m{n}")
    return ", ".join(runs)


def _event_line(event: dict) -> str:
    """A strategy, summarizer, hook or sub-agent event as one line."""
    kind = event.get("event")
    if kind == "strategy":
        return f"strategy: {event.get('name')} {json.dumps(event.get('data') or {}, ensure_ascii=False)}"
    if kind == "summarizer":
        return f"summarizer call on {len(event.get('request') or [])} messages: {str(event.get('reply') or '')[:200]}"
    if kind == "hook":
        return f"hook {event.get('name')}: accepted={event.get('accepted')} {event.get('gaps') or ''}"
    if kind == "tool":
        return f"sub-agent {event.get('subagent')} tool {event.get('name')}"
    return f"{kind}: {json.dumps({k: v for k, v in event.items() if k != 'event'}, ensure_ascii=False)[:200]}"


def _anchor(trial_id: str) -> str:
    """An HTML id for a trial."""
    return "t-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in trial_id)


def page_name(trial_id: str) -> str:
    """The file name of a trial's page."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in trial_id) + ".html"


def _tokens(row: dict) -> int:
    """The row's ``input_tokens`` as a whole number (0 when missing)."""
    try:
        return int(row.get("input_tokens") or 0)
    except (TypeError, ValueError):
        return 0


def trial_table(trials: list[TrialView], href=lambda t: f"#{_anchor(t.trial_id)}") -> str:
    """The trial list with outcomes; each trial links to ``href(trial)``.

    Each row carries ``data-trial``, ``data-family``, ``data-outcome``, ``data-tokens`` (input tokens)
    and ``data-order`` (its place in the run), which the index's controls sort and filter on.
    """
    head = (
        "<thead><tr><th>trial</th><th>family</th><th>success</th><th>outcome</th><th>score</th><th>steps</th>"
        "<th>input tokens</th><th>peak context</th><th>over budget</th><th>compactions</th><th>cache breaks</th>"
        "</tr></thead>"
    )
    rows = []
    for order, t in enumerate(trials):
        r = t.row
        ok = r.get("success")
        family, outcome = escape(str(r.get("family", ""))), escape(str(r.get("outcome")))
        rows.append(
            f'<tr class="trial" data-order="{order}" data-trial="{escape(t.trial_id)}" data-family="{family}" '
            f'data-outcome="{outcome}" data-tokens="{_tokens(r)}">'
            f'<td><a href="{escape(href(t))}">{escape(t.trial_id)}</a></td><td>{family}</td>'
            f'<td class="{"ok" if ok else "fail"}">{"yes" if ok else "no"}</td><td>{outcome}</td>'
            f"<td>{r.get('score', '')}</td><td>{r.get('steps', len(t.steps))}</td><td>{r.get('input_tokens', 0):,}</td>"
            f"<td>{r.get('peak_context', 0):,}</td><td>{r.get('over_budget_steps', '')}</td>"
            f"<td>{r.get('compactions', '')}</td><td>{r.get('cache_breaks', '')}</td></tr>"
        )
    return f'<table class="trials">{head}<tbody>{"".join(rows)}</tbody></table>'


def _options(values: Iterable[str]) -> str:
    return '<option value="">all</option>' + "".join(
        f'<option value="{escape(v)}">{escape(v)}</option>' for v in sorted(set(values))
    )


def index_controls(trials: list[TrialView]) -> str:
    """The index's sort and filter controls (family, outcome, an input-token range; sort key and order).

    Plain HTML; ``INDEX_SCRIPT`` applies them to the rows of ``trial_table``, and keeps them in the
    address's fragment (``#family=code_review&outcome=submitted&min=&max=&sort=tokens&desc=1``), so a
    filtered view can be bookmarked or opened as a link.
    """
    families = _options(str(t.row.get("family", "")) for t in trials)
    outcomes = _options(str(t.row.get("outcome")) for t in trials)
    sorts = "".join(
        f'<option value="{key}">{label}</option>'
        for key, label in (
            ("order", "run order"),
            ("trial", "trial"),
            ("family", "family"),
            ("outcome", "outcome"),
            ("tokens", "input tokens"),
        )
    )
    return (
        '<form class="filters" id="filters" onsubmit="return false">'
        f'<label>family <select id="f-family" name="family">{families}</select></label> '
        f'<label>outcome <select id="f-outcome" name="outcome">{outcomes}</select></label> '
        '<label>input tokens from <input type="number" id="f-min" name="min" min="0" step="1000"></label> '
        '<label>to <input type="number" id="f-max" name="max" min="0" step="1000"></label> '
        f'<label>sort by <select id="f-sort" name="sort">{sorts}</select></label> '
        '<label><input type="checkbox" id="f-desc" name="desc"> descending</label> '
        f'<span id="f-count">{len(trials)} of {len(trials)} trials shown</span></form>'
    )


def trial_section(renderer: Renderer, trial: TrialView) -> str:
    """One trial: header, token curve, steps."""
    anchor = _anchor(trial.trial_id)
    r = trial.row
    steps = trial.steps
    curve = token_curve(
        anchor,
        [s.step for s in steps],
        [s.tokens for s in steps],
        [s.row.get("history_tokens") for s in steps],
        r.get("budget") or trial.start.get("budget"),
        [", ".join(e.get("name", e.get("event", "")) for e in s.events) for s in steps],
        [s.cache_break for s in steps],
    )
    legend = (
        '<div class="legend"><span style="color:#1f6fb2">— request tokens</span><span style="color:#999">'
        '··· full history</span><span style="color:#a31515">- - budget</span><span class="event-line">| strategy event'
        '</span><span class="break-line">○ cache break</span></div>'
    )
    header = (
        f"<h2>{escape(trial.trial_id)}</h2><p>{escape(str(r.get('strategy')))} @ {r.get('budget', 0):,} tokens; "
        f"{escape(str(r.get('family')))}; outcome {escape(str(r.get('outcome')))}; "
        f"{'success' if r.get('success') else 'failure'}; {len(steps)} steps</p>"
    )
    body: list[str] = []
    previous: set[str] = set()
    before: StepView | None = None
    for view in steps:
        body.append(renderer.step(trial, anchor, view, previous, before))
        previous, before = {slot.ref for slot in view.request}, view
    return f'<section class="trial" id="{anchor}">{header}{curve}{legend}{"".join(body)}</section>'


def _marks() -> str:
    return " ".join(
        f'<span class="mark m-{m}">{m}</span>' for m in (KEPT, CUT, "replaced", "offloaded", "summary", "inserted")
    )


def _document(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>{body}</body></html>\n"
    )


def render_trial(run_dir: Path, trial: TrialView, nav: str = "") -> str:
    """The page of one trial (``nav``: links to the index and the neighbouring trials)."""
    title = f"ctxbench view: {Path(run_dir).name} / {trial.trial_id}"
    buttons = (
        '<button type="button" onclick="setAll(true)">expand all</button> '
        '<button type="button" onclick="setAll(false)">collapse all</button>'
    )
    return _document(
        title,
        f"{nav}<p>Marks against the full history: {_marks()}. {buttons}</p>{trial_section(Renderer(), trial)}\n{nav}",
    )


def render_index(run_dir: Path, trials: list[TrialView]) -> str:
    """The index: the trial list with outcomes, each trial linking to its page."""
    title = f"ctxbench view: {Path(run_dir).name}"
    return _document(
        title,
        f"<h1>{escape(title)}</h1><p>{len(trials)} trials; one page each (the request of every "
        f"step marked against the full history: {_marks()}).</p>"
        f"{index_controls(trials)}"
        f"{trial_table(trials, lambda t: page_name(t.trial_id))}\n<script>{INDEX_SCRIPT}</script>\n",
    )


def _nav(trials: list[TrialView], index: int, index_name: str) -> str:
    links = [f'<a href="{escape(index_name)}">index: all {len(trials)} trials</a>']
    if index > 0:
        links.append(f'<a href="{page_name(trials[index - 1].trial_id)}">← {escape(trials[index - 1].trial_id)}</a>')
    if index + 1 < len(trials):
        links.append(f'<a href="{page_name(trials[index + 1].trial_id)}">{escape(trials[index + 1].trial_id)} →</a>')
    return f"<nav>{''.join(links)}</nav>"


def write_view(run_dir: Path, trial: str | None = None, out: Path | None = None) -> Path:
    """Write the view of a run (the index and a page per trial) or of one trial (its page); return the path."""
    run_dir = Path(run_dir)
    trials = load_run(run_dir, trial)
    if trial is not None:
        return write_trial_page(run_dir, trials[0], out)
    return write_pages(run_dir, trials, out)[0]


def write_trial_page(run_dir: Path, view: TrialView, out: Path | None = None) -> Path:
    """The page of one trial (``out``, default ``RUN/view-<trial>.html``); its path."""
    out = Path(out) if out is not None else Path(run_dir) / f"view-{view.trial_id}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_trial(run_dir, view), encoding="utf-8")
    return out


def write_pages(run_dir: Path, trials: list[TrialView], out: Path | None = None) -> tuple[Path, list[Path]]:
    """The index (``out``, default ``RUN/view/index.html``) and a page per trial beside it; their paths."""
    out = Path(out) if out is not None else Path(run_dir) / "view" / "index.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    pages = []
    for index, view in enumerate(trials):
        page = out.parent / page_name(view.trial_id)
        page.write_text(render_trial(run_dir, view, _nav(trials, index, out.name)), encoding="utf-8")
        pages.append(page)
    out.write_text(render_index(run_dir, trials), encoding="utf-8")
    return out, pages


def print_damage(run_dir: Path, trial_ids: list[str] | None = None) -> None:
    """On stderr, one line per damaged records file or transcript the view read (``records.corruption_notes``)."""
    for note in corruption_notes([Path(run_dir)], trial_ids):
        print(note, file=sys.stderr)


def cmd_view(run_dir: Path, trial: str | None = None, out: Path | None = None) -> int:
    """The ``view`` command: write the HTML (the index and the trial pages, or one trial's page) and say where."""
    try:
        if trial is not None:
            view = load_run(run_dir, trial)[0]
            path = write_trial_page(run_dir, view, out)
            print(f"wrote {path} ({path.stat().st_size / 1024:,.0f} KiB)")
            print_damage(run_dir, [view.trial_id])
            return 0
        path, pages = write_pages(run_dir, load_run(run_dir), out)
    except (FileNotFoundError, LookupError) as exc:
        raise UsageError(str(exc)) from None
    print_damage(run_dir)
    sizes = [p.stat().st_size for p in pages]
    print(
        f"wrote {path} ({path.stat().st_size / 1024:,.0f} KiB) and {len(pages)} trial pages beside it "
        f"(largest {max(sizes, default=0) / 1024:,.0f} KiB, {sum(sizes) / 2**20:,.1f} MiB in all)"
    )
    return 0
