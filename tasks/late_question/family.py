"""The ``late_question`` family and its instances: read a one-pass inspection feed, then answer a late question.

``LateQuestion`` (the knobs) draws a night (``world.py``) from ``random.Random(f"late_question:{seed}")``;
``LateQuestionInstance`` serves it through a ``Feed`` (``tools.py``) and grades the answer (``grade.py``).
"""

from __future__ import annotations

import random

from tasks.base import Grade, KnobError, TaskFamily, TaskInstance, ToolResult
from tasks.kit.cursors import CursorPages
from tasks.kit.pages import page_count
from tasks.late_question.grade import grade_values
from tasks.late_question.tools import ANSWER_SENTENCE, Feed, tool_schemas
from tasks.late_question.world import QUESTION_KINDS, Night, generate_night, question_text


class LateQuestion(TaskFamily):
    """Family generator. Knobs: ``records`` (inspection records in the night), ``records_per_batch`` (records each
    ``read_next`` delivers), ``remarks`` (sentences of remarks per record: the records' length) and ``question``
    (one of ``QUESTION_KINDS``, or ``None``: drawn from the seed)."""

    name = "late_question"

    def __init__(
        self, records: int = 96, records_per_batch: int = 4, remarks: int = 4, question: str | None = None
    ) -> None:
        self.records = self.check_knob("records", records, 2, 2000)
        self.records_per_batch = self.check_knob("records_per_batch", records_per_batch, 1, 50)
        self.remarks = self.check_knob("remarks", remarks, 0, 12)
        if question is not None and question not in QUESTION_KINDS:
            raise KnobError(f"task knob question={question!r} must be null or one of {', '.join(QUESTION_KINDS)}")
        self.question = question

    def generate(self, seed: int) -> "LateQuestionInstance":
        """The night for ``seed``: its records, the question and its answer."""
        rng = random.Random(f"late_question:{seed}")
        night = generate_night(rng, self.records, self.records_per_batch, self.remarks, self.question)
        return LateQuestionInstance(self, seed, night)


class LateQuestionInstance(TaskInstance):
    """One night of inspection records behind a one-pass feed, and the supervisor's question after it."""

    family = LateQuestion.name

    def __init__(self, family: LateQuestion, seed: int, night: Night) -> None:
        self.seed = seed
        self.night = night
        self.question = night.question
        self.answer = night.answer
        self.id = f"late_question-r{family.records}-{night.question.kind}-s{seed}"
        batches = page_count(len(night.records), family.records_per_batch)
        self.feed = Feed(
            night.records,
            family.records_per_batch,
            CursorPages(f"{self.id}:feed", batches),
            question_text(night.question),
        )
        self.system_prompt = (
            "You are the night-desk assistant of the customs inspection office at the Port of Valmera. You work "
            "only through the tools you are given. Be exact: the supervisor acts on your answer at once. When you "
            "have the answer, call submit."
        )
        self.user_prompt = (
            f"Process tonight's inspection feed ({len(night.records)} records). read_next delivers the records in "
            f"batches of {family.records_per_batch}, oldest first: pass an empty ack for the first batch, then "
            "the ack token that each batch ends with. The feed is a queue: a batch is deleted from it once "
            "acknowledged, so each record is delivered exactly once and cannot be fetched again. When the feed is "
            "drained, the duty supervisor's request about tonight's inspections becomes available from "
            f"get_request. {ANSWER_SENTENCE}"
        )
        self.tools = tool_schemas()
        self.answer_schema = {
            "type": "object",
            "required": ["values"],
            "properties": {
                "values": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "the container numbers the request asks for",
                }
            },
        }

    def call(self, name: str, args: dict) -> ToolResult:
        """``read_next(ack)`` and ``get_request()``."""
        return self.feed.call(name, args)

    def grade(self, answer: dict) -> Grade:
        """Exact set of container numbers for success, F1 for the score."""
        return grade_values(answer, self.answer)

    def answer_key(self) -> dict:
        """The container numbers the request asks for (what ``grade_values`` compares with)."""
        return {"values": list(self.answer)}

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """The question's kind, the answer's size and the refused re-reads (a used ack token)."""
        refused = sum(1 for call in tool_log if call.get("name") == "read_next" and call.get("is_error"))
        return {"question_kind": self.question.kind, "answer_size": len(self.answer), "refused_reads": refused}

    def data_fingerprint(self) -> list:
        """Every record, the question and the answer."""
        return [[vars(r) for r in self.night.records], vars(self.question), self.answer]
