"""Settings from arguments, the environment and a config file, in that order of precedence.

Environment: ``RAG_JUDGE_MODEL``, ``RAG_JUDGE_GENERATOR``, ``RAG_JUDGE_JUDGE``,
``RAG_JUDGE_EMBEDDINGS``, ``RAG_JUDGE_BASE_URL``, ``RAG_JUDGE_GENERATOR_BASE_URL``,
``RAG_JUDGE_JUDGE_BASE_URL``, ``RAG_JUDGE_JSON_MODE``,
``RAG_JUDGE_CACHE_DIR``, ``RAG_JUDGE_CONCURRENCY``, ``RAG_JUDGE_TIMEOUT``,
``RAG_JUDGE_MAX_ATTEMPTS``, ``RAG_JUDGE_THREADS``, ``RAG_JUDGE_GRID`` and ``RAG_JUDGE_CONFIG``
(the config file).
Config file (TOML): the first of ``$RAG_JUDGE_CONFIG``, ``./rag_judge.toml``, a
``./pyproject.toml`` with a ``[tool.rag_judge]`` table, and the user config directory's
``config.toml``; keys as the field names below, at top level or under ``[rag_judge]`` (in
``pyproject.toml``: under ``[tool.rag_judge]``). A table it does not read is refused, never
silently ignored. API keys are never read from or written to files: they come from the
provider's own environment variables (``OPENAI_API_KEY`` ...).
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from rag_judge.backends.registry import DEFAULT_EMBEDDINGS, DEFAULT_MODEL
from rag_judge.backends.types import JSON_MODES
from rag_judge.core.errors import InputError

ENV_PREFIX = "RAG_JUDGE_"
_SECRET_WORDS = ("key", "secret", "token", "password")


def default_cache_dir() -> Path:
    """Where responses, indexes and assembled weights live unless told otherwise."""
    return Path(platformdirs.user_cache_dir("rag_judge"))


@dataclass(frozen=True)
class Settings:
    """Which models to use and how to call them."""

    model: str = DEFAULT_MODEL
    """Chat model, ``provider/model``: the generator and the judge unless either is named."""
    generator: str | None = None
    """The model that answers in a sweep (None: ``model``)."""
    judge: str | None = None
    """The model that judges (None: ``model``). A model judging its own answers is biased
    towards them, so a sweep's report warns when generator and judge are one model."""
    embeddings: str = DEFAULT_EMBEDDINGS
    """Embedding model, ``provider/model``."""
    base_url: str | None = None
    """OpenAI-compatible server for ``openai/`` and ``litellm/`` models (None: provider's)."""
    generator_base_url: str | None = None
    """The generator's server, when it is not ``base_url`` (a RAG's model on a vLLM server,
    the judge on an API)."""
    judge_base_url: str | None = None
    """The judge's server, when it is not ``base_url``."""
    json_mode: str = "auto"
    """How JSON schemas are sent to a server (``rag_judge.backends.types.JSON_MODES``)."""
    cache_dir: Path = field(default_factory=default_cache_dir)
    """Response cache and other artefacts."""
    concurrency: int = 8
    """Model calls in flight at once."""
    timeout: float = 120.0
    """Seconds per attempt."""
    max_attempts: int = 4
    """Attempts per call for transient failures."""
    threads: int | None = None
    """CPU threads of an in-process ``local/`` model (None: every core this process may use;
    one per Ray worker when several share a machine)."""
    grid: str | None = None
    """The grid ``rag-judge sweep`` sweeps when no ``--grid`` is given: axes separated by
    ``;``, e.g. ``"retriever=bm25,dense,hybrid; rerank=none,llm"`` (in a config file also a
    list, one axis each). None: a plain k-sweep."""

    @property
    def grid_axes(self) -> tuple[str, ...]:
        """The grid's axes as ``--grid`` takes them, one text each (none without a grid)."""
        return tuple(a.strip() for a in (self.grid or "").split(";") if a.strip())

    @property
    def generator_model(self) -> str:
        """The model that answers: ``generator``, else ``model``."""
        return self.generator or self.model

    @property
    def judge_model(self) -> str:
        """The model that judges: ``judge``, else ``model``."""
        return self.judge or self.model

    @property
    def generator_server(self) -> str | None:
        """Where the generator is served: ``generator_base_url``, else ``base_url``, else
        None (the provider's own, e.g. ``OPENAI_BASE_URL``)."""
        return self.generator_base_url or self.base_url

    @property
    def judge_server(self) -> str | None:
        """Where the judge is served: ``judge_base_url``, else ``base_url``, else None."""
        return self.judge_base_url or self.base_url

    @property
    def cache_path(self) -> Path:
        """The SQLite response cache."""
        return self.cache_dir / "responses.sqlite"


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    config_path: str | Path | None = None,
) -> Settings:
    """Defaults, then the config file, then the environment, then ``overrides`` (not None)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    path = _config_path(config_path, env)
    if path is not None:
        _layer(values, _read_config(path))
    from_env = {}
    for name in _FIELDS:
        if (raw := env.get(ENV_PREFIX + name.upper())) is not None and raw != "":
            from_env[name] = _convert(
                name, raw, source=f"environment variable {ENV_PREFIX}{name.upper()}"
            )
    _layer(values, from_env)
    given = {}
    for name, value in (overrides or {}).items():
        if name not in _FIELDS:
            raise InputError(f"unknown setting '{name}'", field=name)
        if value is not None:
            given[name] = _convert(name, value, source=f"--{name.replace('_', '-')}")
    _layer(values, given)
    return Settings(**values)


def _layer(values: dict[str, Any], higher: Mapping[str, Any]) -> None:
    """Put a higher-precedence source's values over ``values``. ``model`` is the shorthand for
    generator and judge, and ``base_url`` for their servers: set at a higher level, each
    replaces a role's own value set below."""
    for shorthand, roles in _SHORTHANDS.items():
        if shorthand in higher:
            for role in roles:
                if role not in higher:
                    values.pop(role, None)
    values.update(higher)


_SHORTHANDS = {
    "model": ("generator", "judge"),
    "base_url": ("generator_base_url", "judge_base_url"),
}


def _config_path(explicit: str | Path | None, env: Mapping[str, str]) -> Path | None:
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise InputError("config file not found", source=str(path))
        return path
    if env.get(ENV_PREFIX + "CONFIG"):
        return _config_path(env[ENV_PREFIX + "CONFIG"], {})
    for candidate in (
        Path("rag_judge.toml"),
        Path(PYPROJECT),
        Path(platformdirs.user_config_dir("rag_judge")) / "config.toml",
    ):
        if candidate.is_file() and (candidate.name != PYPROJECT or _has_tool_table(candidate)):
            return candidate
    return None


PYPROJECT = "pyproject.toml"
"""A project's own file: read only for its ``[tool.rag_judge]`` table."""


def _has_tool_table(path: Path) -> bool:
    """Whether a ``pyproject.toml`` has a ``[tool.rag_judge]`` table (a plain look at its text:
    a project's file that is not ours is not parsed, so its mistakes are not ours to report)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return any(
        line.strip().replace(" ", "").startswith(("[tool.rag_judge]", "[tool.rag_judge."))
        for line in text.splitlines()
    )


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"invalid TOML: {error}", source=str(path)) from None
    if path.name == PYPROJECT:
        return _read_pyproject(data, path)
    _refuse_secrets(data, path)
    table = data.get("rag_judge", data)
    if table is not data:
        loose = [k for k, v in data.items() if k != "rag_judge" and not isinstance(v, dict)]
        if loose:
            raise InputError(
                "settings go in the [rag_judge] table, not above it",
                source=str(path),
                field=loose[0],
            )
    for name, value in data.items():
        if name != "rag_judge" and isinstance(value, dict):
            where = " ([tool.rag_judge] is read from pyproject.toml)" if name == "tool" else ""
            raise InputError(
                f"the table [{name}] is not read: settings go at the top level or in the "
                f"[rag_judge] table{where}",
                source=str(path),
                field=name,
            )
    return _settings_of(table, path)


def _read_pyproject(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The ``[tool.rag_judge]`` table of a project's ``pyproject.toml`` (the rest is not ours)."""
    tool = data.get("tool")
    table = tool.get("rag_judge") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        raise InputError("has no [tool.rag_judge] table", source=str(path))
    _refuse_secrets(table, path, "tool.rag_judge.")
    for name, value in table.items():
        if isinstance(value, dict):
            raise InputError(
                f"the table [tool.rag_judge.{name}] is not read: settings go in "
                "[tool.rag_judge] itself",
                source=str(path),
                field=f"tool.rag_judge.{name}",
            )
    return _settings_of(table, path)


def _settings_of(table: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The settings a config table holds, each converted and checked."""
    out: dict[str, Any] = {}
    for name, value in table.items():
        if name not in _FIELDS:
            raise InputError(
                f"unknown setting; known: {', '.join(_FIELDS)}", source=str(path), field=name
            )
        out[name] = _convert(name, value, source=str(path))
    return out


def _refuse_secrets(table: Mapping[str, Any], path: Path, prefix: str = "") -> None:
    """Refuse a config table that holds anything like an API key, naming its dotted key."""
    if (secret := _secret_key(table, prefix)) is not None:
        raise InputError(
            "API keys are read from the environment only (e.g. OPENAI_API_KEY), "
            "never from a config file",
            source=str(path),
            field=secret,
        )


def _secret_key(table: Mapping[str, Any], prefix: str = "") -> str | None:
    """The dotted name of the first key anywhere in the file that looks like a secret."""
    for name, value in table.items():
        dotted = f"{prefix}{name}"
        if any(word in name.lower() for word in _SECRET_WORDS):
            return dotted
        if isinstance(value, Mapping) and (found := _secret_key(value, dotted + ".")) is not None:
            return found
    return None


def _convert(name: str, value: Any, *, source: str) -> Any:
    kind = {
        "concurrency": int,
        "max_attempts": int,
        "threads": int,
        "timeout": float,
        "cache_dir": Path,
    }.get(name)
    if name == "grid" and isinstance(value, list):
        if not all(isinstance(axis, str) for axis in value):
            raise InputError(
                "must be a list of AXIS=V1,V2 texts, e.g. ['retriever=bm25,dense']",
                source=source,
                field=name,
            )
        value = "; ".join(value)
    if kind is None:
        optional = name in _OPTIONAL
        if value in ("", None) and optional:
            return None
        if name in _MODEL_KINDS:
            _check_model_name(str(value), _MODEL_KINDS[name], source=source, field=name)
        if name == "json_mode" and value not in JSON_MODES:
            raise InputError(
                f"{value!r} is not a JSON mode; known: {', '.join(JSON_MODES)}",
                source=source,
                field=name,
            )
        return str(value)
    try:
        converted = kind(value)
    except (TypeError, ValueError):
        raise InputError(
            f"{value!r} is not a valid {kind.__name__}", source=source, field=name
        ) from None
    if kind is float and not math.isfinite(converted):
        raise InputError(f"must be a finite number, got {value!r}", source=source, field=name)
    if kind is int and isinstance(value, float) and not value.is_integer():
        raise InputError(f"must be a whole number, got {value!r}", source=source, field=name)
    if kind in (int, float) and converted <= 0:
        raise InputError(f"must be positive, got {value!r}", source=source, field=name)
    if name in _LIMITS and converted > _LIMITS[name]:
        raise InputError(
            f"must be at most {_LIMITS[name]:g}, got {value!r}", source=source, field=name
        )
    return converted


_OPTIONAL = ("base_url", "generator_base_url", "judge_base_url", "generator", "judge", "grid")
"""The settings that may be unset (None): an empty value unsets them."""

_MODEL_KINDS = {"model": "chat", "generator": "chat", "judge": "chat", "embeddings": "embeddings"}
"""The settings that name a model, and of which kind: checked when read, before any call."""


def _check_model_name(value: str, kind: str, *, source: str, field: str) -> None:
    """A ``provider/model`` name with a known provider, or a clear error naming the setting."""
    from rag_judge.backends.registry import parse_model_name

    try:
        parse_model_name(value, kind)
    except InputError as error:
        raise InputError(error.message, source=source, field=field) from None


_LIMITS: dict[str, float] = {
    "timeout": 86_400.0,
    "max_attempts": 100,
    "concurrency": 10_000,
    "threads": 4_096,
}
"""Upper bounds of the numeric settings: beyond them a value is a mistake (a day-long timeout
per attempt hangs a run on a dead server; 10^9 concurrent calls exhaust the machine)."""
