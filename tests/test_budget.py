import pytest
from harness.budget import BudgetError, format_budget, parse_budget


@pytest.mark.parametrize(
    "text,tokens",
    [
        ("25k", 25_000),
        ("25000", 25_000),
        ("0.5M", 500_000),
        ("8K", 8_000),
        (" 1m ", 1_000_000),
        (12_000, 12_000),
        ("1_000", 1_000),
        ("1.5k", 1_500),
    ],
)
def test_parse_budget_accepts_the_documented_forms(text, tokens):
    assert parse_budget(text) == tokens


@pytest.mark.parametrize("text", ["", "abc", "-5k", "0", "25kb", "k", True, "1e5"])
def test_parse_budget_rejects_everything_else_with_the_valid_forms(text):
    with pytest.raises(BudgetError):
        parse_budget(text)


def test_format_budget_round_trips():
    for tokens in (8_000, 25_000, 1_000_000, 1_500_000, 123):
        assert parse_budget(format_budget(tokens)) == tokens
