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
records were read, and restating every detail of every record is as long as the records
themselves. A careful reader notes the gist of each record (id, time, vessel, container, outcome)
and answers from the raw records where they are still in view: under ``none`` all are; under an
8K window, summaries or cleared results the middle records are gone, and the queue refuses to
deliver them again (a used ack token is an error), so the answer misses records.

Sources: the source chapters' claims that dropping old rounds "is free but the information is
simply gone" and that a summary "may miss details". Published anchors: MemoryAgentBench's
"accurate retrieval" and "long-range understanding" competencies (the question comes after the
evidence), and ACON (naive compression loses task accuracy on multi-objective QA).

Answer: ``submit(values=[...])``, container numbers. Grade (``grade.py``): success = the exact set
(compared by letters and digits); score = F1.

Sizes (knobs ``records``, ``records_per_batch``, ``remarks``, ``question``):

* default (config): ``records=96 records_per_batch=4 remarks=4``: 24 batches, 26 steps, ``none`` peaks near 69K tokens;
* long: ``records=320 records_per_batch=4 remarks=4``: 80 batches, 82 steps; ``none`` passes 150K tokens
  (about 470K with an unbounded window: the ledger restates a line per record in every reply);
* smoke: ``records=6 records_per_batch=3 remarks=1``: 2 batches, 4 steps (about 2.8K tokens), well under a second.

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
