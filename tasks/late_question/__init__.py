"""``late_question``: relevance revealed late. Read a night's inspection feed once, then answer a question about it.

What it models: a night-desk assistant at a port's customs office works through the overnight
container-inspection feed, a message queue read with ``read_next(ack)``: each batch of records
ends with the ack token that acknowledges it and delivers the next, and an acknowledged batch is
deleted (``tools.py``), so a record is delivered once and can never be fetched again. Each record
holds some 30 specific fields (vessel, container, seal, shipper, consignee, cargo, HS code,
weights, reefer readings, X-ray scanner and result, officer, K9 team, truck plate, driver,
outcome) and a few sentences of remarks. Only when the feed is drained does ``get_request()``
give the duty supervisor's question (``world.py``, drawn from the seed among five kinds: which
container carried a seal; which containers a truck collected; the clean scans of a scanner; the
containers weighed more than 5% over their declaration; the containers of a shipper). Its answer
is a set of container numbers; at least one answer record lies in the middle of the night.

Why context management loses it: the question names a detail that looked unimportant while the
records were read. The recorded LLM (calibration/issue-34) appended compact notes of every record, every
field, batch by batch, and answered from them: ``clear_tool_results`` clears only tool results, so the
notes survive; its summarizer kept every record; ``headtail`` and ``sliding_window`` at 8k drop the old rounds
and their notes with them, and the queue refuses to deliver a record again (a used ack token is an error),
so the answer misses records.

Sources: the source chapters' claims that dropping old rounds "is free but the information is
simply gone" and that a summary "may miss details". Published anchors: MemoryAgentBench's
"accurate retrieval" and "long-range understanding" competencies (the question comes after the
evidence), and ACON (naive compression loses task accuracy on multi-objective QA).

Answer: ``submit(values=[...])``, container numbers. Grade (``grade.py``): success = the exact set
(compared by letters and digits); score = F1.

Sizes (knobs ``records``, ``records_per_batch``, ``remarks``, ``question``; steps and peaks per suite:
tasks/README.md's generated tables): default ``records=96 records_per_batch=4 remarks=4`` (24 batches); long
``records=320`` (80 batches, ``configs/suite/long.yaml``); smoke ``records=6 records_per_batch=3 remarks=1``.

Reference policy: ``reference_agent/policies/late_question.py``.
"""

from tasks.base import FamilySpec
from tasks.late_question.family import LateQuestion, LateQuestionInstance
from tasks.late_question.grade import grade_values
from tasks.late_question.world import QUESTION_KINDS, Question, Record

__all__ = ["FAMILY", "QUESTION_KINDS", "LateQuestion", "LateQuestionInstance", "Question", "Record"]

FAMILY = FamilySpec(
    LateQuestion.name,
    LateQuestion,
    LateQuestionInstance,
    grade_values,
    policy="reference_agent.policies.late_question:LateQuestionPolicy",  # notes the gist, answers from raw records
)
"""The family's registration (``tasks.registry``)."""
