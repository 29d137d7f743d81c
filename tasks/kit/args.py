"""Reading a model's numbers without raising: tool arguments and answers come from a model and can be anything.

``digits`` is the one place where a family turns a string into an integer. ``str.isdigit`` and
``int`` disagree (``"²".isdigit()`` is true, ``int("²")`` raises) and ``int`` refuses more than 4300
digits, so a family that checks ``isdigit`` and then calls ``int`` would crash on such an argument.
Families answer a bad argument with an error result and grade a bad answer as wrong.
"""

from __future__ import annotations

MAX_DIGITS = 18  # no page, count or percentage has more; int() of up to 18 digits is instant


def digits(text: object, max_digits: int = MAX_DIGITS) -> int | None:
    """The integer a string of decimal digits spells, spaces around allowed (``" 42 "`` -> 42), else ``None``:
    not a string, empty, a sign or other characters, digits ``int`` does not read (``"²"``), or more than
    ``max_digits`` digits."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not text or len(text) > max_digits or not text.isdecimal():
        return None
    return int(text)
