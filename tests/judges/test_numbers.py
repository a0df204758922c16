"""Numbers as values: units, scales, separators, Chinese numerals, percent and per-mille, dates;
and the per-script lexical coverage that compares them (rag_judge.judges.numbers, .lexical)."""

from __future__ import annotations

import pytest

from rag_judge.judges.lexical import (
    content_units,
    coverage,
    grounded_in,
    unstated_facts,
    unstated_names,
    unstated_numbers,
)
from rag_judge.judges.numbers import quantities, states, unstated


def values(text: str, *, generous: bool = False) -> list[float]:
    return [q.value for q in quantities(text, generous=generous)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1361万", [13_610_000]),
        ("13,610,000 people", [13_610_000]),
        ("13.61 million", [13_610_000]),
        ("$10.4 billion", [10_400_000_000]),
        ("11.42亿元", [1_142_000_000]),
        ("3千万", [30_000_000]),
        ("2.3%", [0.023]),
        ("2.3 per cent", [0.023]),
        ("2.3 percent", [0.023]),
        ("增长2.3个百分点", [0.023]),
        ("百分之二点三", [0.023]),
        ("百分之2.3", [0.023]),
        ("10.48‰", [0.01048]),
        ("１０％", [0.1]),  # full-width digits and sign
        ("三千五百万", [35_000_000]),
        ("一百零五", [105]),
        ("十五", [15]),
        ("两万亿", [2_000_000_000_000]),
        ("一亿三千万", [130_000_000]),
        ("二〇一〇年", [2010]),
        ("二零一零年", [2010]),
        ("三点五米", [3.5]),
        ("五位歌手", [5]),
        ("2011年2月12日", [2011, 2, 12]),
        ("2021-02-12", [2021, 2, 12]),
        ("1990s", [1990]),
        ("the 2018–19 season", [2018, 2019]),
        ("1999-00", [1999, 2000]),
        ("the 21st century", [21]),
        ("10-14个", [10, 14]),
    ],
)  # fmt: skip
def test_numbers_are_read_with_their_scale_and_unit(text: str, expected: list[float]) -> None:
    assert values(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    [
        "一起去",  # 一 inside a word
        "一个人",  # 一个 is mostly "a"
        "三茂铁路",  # a lone numeral that counts nothing
        "十分重要",  # 十分 = "very"
        "千万不要",  # 千万 = "by all means"
        "万一下雨",  # 万一 = "in case"
        "三三两两",  # an idiom, not a digit string
        "5G网络",  # digits glued to letters: a name, compared as a word
        "MP3 player",
        "one of them",  # English number words are not read from a claim
    ],
)
def test_words_that_only_look_like_numbers_are_not_read_from_a_claim(text: str) -> None:
    assert quantities(text) == []


def test_a_source_is_read_generously() -> None:
    assert values("four children", generous=True) == [4]
    assert values("born on February 12", generous=True) == [2, 12]
    assert values("一个人", generous=True) == [1]


@pytest.mark.parametrize(
    ("claim", "source", "stated"),
    [
        ("1361万", "全市人口为13,610,000人", True),
        ("13.61 million", "人口1361万", True),
        ("$10.4 billion", "revenue of $10,412 million", True),  # a rounded figure
        ("2.3%", "增长百分之二点三", True),
        ("2.3", "grew 2.3%", True),  # the same digits, one a percentage
        ("4 children", "four children", True),
        ("2月12日", "born on February 12", True),
        ("2010年", "于2010年发售", True),
        ("170", "about 70 people", False),  # shares "70", a different value
        ("161万", "人口1361万", False),
        ("2011年2月12日", "2021年2月12日", False),
        ("1.0级", "发生7.0级地震", False),
        ("2", "2.3 metres", False),  # a whole number is not a rounding of 2.3
        ("13万", "13亿", False),  # the same digits, another scale
    ],
)  # fmt: skip
def test_a_claims_number_is_stated_only_by_its_value(claim: str, source: str, stated: bool) -> None:
    assert (unstated(quantities(claim), source) == []) is stated


def test_states_compares_values_not_strings() -> None:
    assert states(quantities("0.023")[0], quantities("2.3%")[0])
    assert not states(quantities("2.4%")[0], quantities("2.3%")[0])


# --- per-script lexical coverage ------------------------------------------------------------

PASSAGE = "《战国无双3》是由光荣和ω-force合作开发的游戏，于2010年发售，首周销量42.1万套。"


def test_mixed_script_claims_are_covered_script_by_script() -> None:
    # Han as bigrams, Latin as a word: the demo's own answer is in its passage.
    assert coverage("光荣和ω-force", PASSAGE) == 1.0
    assert coverage("It was developed by 光荣和ω-force.", PASSAGE) == pytest.approx(3 / 4)
    # ... both ways: an English passage that quotes a Chinese name covers it too.
    english = "The game was developed by 光荣 and ω-force in 2010."
    assert coverage("光荣 and ω-force developed it in 2010", english) == 1.0


def test_numbers_count_as_values_in_coverage() -> None:
    assert coverage("首周销量42.1万套", PASSAGE) == 1.0
    assert coverage("首周销量421,000套", PASSAGE) == 1.0  # the same value, another form
    assert coverage("首周销量41.2万套", PASSAGE) < 1.0
    assert unstated_numbers("首周销量41.2万套", PASSAGE) == ["41.2万"]
    assert unstated_numbers("于2010年发售", PASSAGE) == []


def test_content_units_split_by_script_within_one_text() -> None:
    assert content_units("2010年iPhone 4发售") == ["2010", "年", "iphone", "4", "发售"]
    assert content_units("The founders' company") == ["founders", "company"]


def test_english_only_text_keeps_its_words_and_stems() -> None:
    source = "Acme, founded in 1990 by Jo Park, is based in Boston."
    assert coverage("Acme's founding was in 1990.", source) == 1.0  # founding ~ founded
    assert coverage("Acme was founded in 1991.", source) == pytest.approx(2 / 3)


def test_grounding_counts_han_characters_words_and_numbers() -> None:
    segment = "《战国无双3》由光荣和ω-force于2010年开发。"
    assert grounded_in("光荣和ω-force开发了战国无双3", segment)
    assert not grounded_in("任天堂于2012年在东京发行", segment)


def test_latin_names_in_chinese_text_must_be_in_a_passage() -> None:
    passage = "武藏浦和站隶属于东日本旅客铁道（JR东日本），距离364.6km，抗原CD11a。"
    assert unstated_names("东日本旅客铁道（JR东日本）", passage) == []
    assert unstated_names("东日本旅客铁道（Apthorp东日本）", passage) == ["Apthorp"]
    assert unstated_names("辨识CD11a抗原", passage) == []  # letters and digits, one token
    assert unstated_names("距离364.6km", passage) == []  # a unit is part of its number
    assert unstated_names("The JR line", "The Keio line") == []  # English text: coverage's job
    assert unstated_facts("距离365.6km的Apthorp", passage) == ["365.6km", "Apthorp"]


def test_units_after_digits_are_read_with_the_number() -> None:
    assert values("364.6km") == [364.6]
    assert values("5kg and 10 kg") == [5, 10]
    assert values("5G网络") == []  # not a unit: a name
