"""Language detection by script share, and language display names."""

from __future__ import annotations

import pytest

from rag_judge.core.language import CJK_SHARE, LANGUAGE_NAMES, detect_language, language_name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is the capital of France?", "en"),
        ("Qu'est-ce que la photosynthèse ?", "en"),  # other Latin scripts: no prompts, so en
        ("Что такое фотосинтез?", "en"),
        ("法国的首都是哪里?", "zh"),
        ("NBA的创始人是谁?", "zh"),
        ("2008年北京奥运会有多少个国家参加?", "zh"),
        ("GPT-4有多少参数?", "zh"),
        ("PyTorch和TensorFlow哪个好?", "zh"),  # 4 Han of 21 letters = 19%
        ("什麼是光合作用？", "zh"),  # traditional characters, full-width punctuation
        ("What is the population of 北京?", "en"),  # 2 Han of 23 letters = 9%
        ("Who founded 腾讯?", "zh"),  # 2 of 12 = 17%: the documented tipping case
        ("東京都の人口は?", "ja"),
        ("東京都の人口", "ja"),  # one kana among Han is enough
        ("コーヒーとは何ですか", "ja"),
        ("서울의 인구는 얼마입니까?", "ko"),
        ("ChatGPT는 무엇인가요?", "ko"),
        ("“数据”——一个词", "zh"),  # punctuation borrowed from CJK does not count
        ("中国·北京ー", "zh"),  # ・ and ー alone are not kana
        ("", "en"),
        ("   ", "en"),
        ("42? 3.14!", "en"),
        (None, "en"),
    ],
)
def test_detect_language(text: str | None, expected: str) -> None:
    assert detect_language(text) == expected


def test_threshold_is_inclusive_share_of_letters() -> None:
    # 3 Han among 20 letters is exactly CJK_SHARE; one more Latin letter drops below it.
    assert CJK_SHARE == 0.15
    assert detect_language("abcdefghijklmnopq 中文字") == "zh"
    assert detect_language("abcdefghijklmnopqr 中文字") == "en"


def test_language_names() -> None:
    assert set(LANGUAGE_NAMES) == {"en", "zh", "ja", "ko"}
    assert language_name("en") == "English"
    assert language_name("zh") == "Chinese (简体中文)"
    assert language_name("fr") == "fr"
    with pytest.raises(TypeError):
        LANGUAGE_NAMES["fr"] = "French"  # type: ignore[index]
