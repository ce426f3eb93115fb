"""One home for the report's numbers (wfeval/report/numbers.py): every rendering formats through it."""

from __future__ import annotations

import math

import pytest

from wfeval.report.html.values import fmt as html_fmt
from wfeval.report.numbers import EN_DASH, HYPHEN, fmt, number, p_value, signed, significant


@pytest.mark.parametrize("value, text", [
    (28.1449, "28.14"), (0.000123456, "0.0001235"), (35340.2, "3.534e+04"), (1.0, "1"), (100.0, "100"),
    (12345, "12345"), (True, "yes"), (False, "no"), ("n/a", "n/a"), (math.inf, "inf"), (-math.inf, "-inf"),
    (math.nan, "nan"),
])
def test_a_value_has_four_significant_digits_and_the_same_text_in_every_rendering(value, text):
    assert fmt(value) == text
    assert html_fmt(value) == text


def test_a_missing_value_is_a_hyphen_in_text_and_an_en_dash_in_html():
    assert (fmt(None), html_fmt(None)) == ("-", "–") == (HYPHEN, EN_DASH)
    assert fmt(None, missing=EN_DASH) == "–"
    assert fmt(0.123456, 2) == html_fmt(0.123456, 2) == "0.12"


def test_a_difference_is_signed_only_when_positive():
    assert [signed(v) for v in (0.1368, -19.86, 0.0, None, math.nan)] == ["+0.1368", "-19.86", "0", "-", "nan"]
    assert signed(None, missing=EN_DASH) == "–"


def test_a_p_value_has_four_decimals_below_one_percent_and_three_digits_above():
    assert [p_value(p) for p in (0.00001, 0.004, 0.125, 0.875, 1.0, None)] == [
        "<0.0001", "0.0040", "0.125", "0.875", "1", "-"]


def test_significant_digits_apply_to_integers_too_where_fmt_writes_them_in_full():
    assert (significant(12345), fmt(12345), significant(0.5)) == ("1.234e+04", "12345", "0.5")


def test_only_finite_real_numbers_are_numbers():
    assert [number(v) for v in (3, 2.5, True, "1", None, math.nan, math.inf)] == [3.0, 2.5, None, None, None, None,
                                                                                   None]
