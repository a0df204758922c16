"""Settings: arguments over environment over config file over defaults; no secrets in files."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_judge.backends import DEFAULT_MODEL
from rag_judge.core.errors import InputError
from rag_judge.runtime.settings import load_settings


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing"))
    settings = load_settings(env={})
    assert settings.model == DEFAULT_MODEL
    assert settings.concurrency == 8


def test_precedence(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[rag_judge]\nmodel = "openai/from-file"\nconcurrency = 3\ntimeout = 9\n')
    env = {"RAG_JUDGE_CONFIG": str(config), "RAG_JUDGE_CONCURRENCY": "5"}
    settings = load_settings({"timeout": 2.5, "model": None}, env=env)
    assert settings.model == "openai/from-file"  # file (argument None means "not given")
    assert settings.concurrency == 5  # environment beats file
    assert settings.timeout == 2.5  # argument beats both
    assert settings.cache_path.name == "responses.sqlite"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('api_key = "sk-123"', "environment only"),
        ('api_key = "sk-123"\n[rag_judge]\nmodel = "local/x"', "field .api_key.: API keys"),
        ('[rag_judge]\nmodel = "local/x"\n[openai]\napi_key = "sk-1"', "openai.api_key"),
        ('[tool.other]\nsecret_token = "x"', "tool.other.secret_token"),
        ('model = "local/x"\n[rag_judge]\ntimeout = 3', "in the \\[rag_judge\\] table"),
        ('colour = "blue"', "unknown setting"),
        ('[tool.rag_judge]\nmodel = "local/x"', "table \\[tool\\] is not read.*pyproject"),
        ('[rag_judge]\nmodel = "local/x"\n[ragjudge]\ntimeout = 3', "table \\[ragjudge\\]"),
        ("concurrency = -2", "must be positive"),
        ("model = [", "invalid TOML"),
    ],
)
def test_bad_config_files_name_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(text + "\n")
    with pytest.raises(InputError, match=message) as error:
        load_settings(env={}, config_path=config)
    assert str(config) in str(error.value)


def test_a_pyproject_is_read_for_its_tool_table_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[tool.rag_judge]`` in ./pyproject.toml is a config file, as pytest's and ruff's are; a
    pyproject without it is not ours and not read (not even parsed)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing"))
    project = tmp_path / "pyproject.toml"
    project.write_text('[project]\nname = "x"\n[tool.other]\ntoken = 3\n')
    assert load_settings(env={}).model == DEFAULT_MODEL
    project.write_text("[project\n")  # broken, and not ours to read
    assert load_settings(env={}).model == DEFAULT_MODEL
    project.write_text('[tool.other]\ntoken = 3\n[tool.rag_judge]\nmodel = "openai/p"\n')
    assert load_settings(env={}).model == "openai/p"
    (tmp_path / "rag_judge.toml").write_text('model = "openai/r"\n')
    assert load_settings(env={}).model == "openai/r"  # the tool's own file first
    (tmp_path / "rag_judge.toml").unlink()
    project.write_text('[tool.rag_judge]\napi_key = "sk-1"\n')
    with pytest.raises(InputError, match=r"tool\.rag_judge\.api_key"):
        load_settings(env={})
    project.write_text('[tool.rag_judge.openai]\nmodel = "x"\n')
    with pytest.raises(InputError, match=r"table \[tool\.rag_judge\.openai\] is not read"):
        load_settings(env={})


def test_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(InputError, match="RAG_JUDGE_TIMEOUT"):
        load_settings(env={"RAG_JUDGE_TIMEOUT": "soon"})


def test_generator_and_judge_default_to_model_and_model_replaces_them_from_below(
    tmp_path: Path,
) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[rag_judge]\nmodel = "local/a"\njudge = "openai/b"\n')
    from_file = load_settings(env={}, config_path=config)
    assert (from_file.generator_model, from_file.judge_model) == ("local/a", "openai/b")
    # --model is the shorthand for both: given as an argument, it beats the file's judge.
    argued = load_settings({"model": "local/c"}, env={}, config_path=config)
    assert (argued.generator_model, argued.judge_model) == ("local/c", "local/c")
    both = load_settings({"model": "local/c", "judge": "openai/d"}, env={}, config_path=config)
    assert (both.generator_model, both.judge_model) == ("local/c", "openai/d")
    env = {"RAG_JUDGE_GENERATOR": "local/e"}
    assert load_settings(env=env, config_path=config).generator_model == "local/e"
    assert load_settings(env={}).judge == load_settings(env={}).generator is None


def test_the_json_mode_is_a_setting_and_checked() -> None:
    assert load_settings(env={}).json_mode == "auto"
    assert load_settings({"json_mode": "none"}, env={}).json_mode == "none"
    with pytest.raises(InputError, match="not a JSON mode; known: auto, json_schema"):
        load_settings(env={"RAG_JUDGE_JSON_MODE": "yaml"})


def test_threads_is_a_positive_setting() -> None:
    assert load_settings(env={}).threads is None
    assert load_settings(env={"RAG_JUDGE_THREADS": "1"}).threads == 1
    with pytest.raises(InputError, match="must be positive"):
        load_settings({"threads": 0}, env={})


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("TIMEOUT", "nan", "must be a finite number"),  # NaN turned the timeout off
        ("TIMEOUT", "inf", "must be a finite number"),
        ("TIMEOUT", "1e9", "must be at most 86400"),
        ("MAX_ATTEMPTS", "0", "must be positive"),
        ("MAX_ATTEMPTS", "1000", "must be at most 100"),
        ("CONCURRENCY", "-3", "must be positive"),
        ("THREADS", "1.5", "is not a valid int"),
    ],
)
def test_numeric_settings_are_finite_and_in_range(name: str, raw: str, message: str) -> None:
    with pytest.raises(InputError, match=rf"RAG_JUDGE_{name}.*{message}"):
        load_settings(env={f"RAG_JUDGE_{name}": raw})


def test_a_whole_float_is_taken_for_an_int_setting() -> None:
    assert load_settings({"concurrency": 4.0}).concurrency == 4
    with pytest.raises(InputError, match="must be a whole number"):
        load_settings({"concurrency": 4.5})
