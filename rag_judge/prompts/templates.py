"""Prompt files: load, render, hash and validate the text every LLM step sends.

Each step has one Markdown file per language, ``prompts/<group>/<step>.<lang>.md``: YAML front
matter (``id``, ``version``, ``language``, ``inputs``, ``output``, ``description``) and a Jinja2
body cut into chat messages by ``=== system ===``, ``=== user ===`` and ``=== assistant ===``
lines. A template's :attr:`~PromptTemplate.ref` (``id.lang@version#hash``) travels with every
request, so a score can be traced to the exact prompt; ``prompts.lock.json`` keeps the hash of
every released version, so an edit that keeps its version number is caught, not silently
scored. Each message is a template of its own: no Jinja block spans a role marker, and no
input text can open a new message.

>>> tpl = load_prompt("claims/support", "zh")
>>> tpl.ref.startswith("claims/support.zh@2#")
True
>>> parts = tpl.render(passages=["巴黎是法国首都。"], question="巴黎在哪？", claim="巴黎是首都。")
>>> [m.role for m in parts]
['system', 'user']
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import jinja2
import jinja2.meta
import yaml
from pydantic import BaseModel

from rag_judge.backends.types import ChatRequest, Message
from rag_judge.core.errors import InputError, RagJudgeError
from rag_judge.prompts.schemas import OUTPUT_MODELS

Role = Literal["system", "user", "assistant"]
LANGUAGES = ("en", "zh")
"""Languages every prompt must exist in; ``en`` is the fallback."""
YES_NO = "yes_no"
"""The ``output`` of prompts read through P(yes) of the first reply token, not parsed."""
TEXT = "text"
"""The ``output`` of prompts whose reply is free text, used as is (e.g. a generated answer)."""
UNPARSED = (YES_NO, TEXT)
"""Outputs that name no pydantic model."""
LOCK_FILE = "prompts.lock.json"
FIXTURES_FILE = "fixtures.json"
FIELDS = ("id", "version", "language", "inputs", "output", "description")
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.DOTALL)
_MARKER = re.compile(r"^=== (system|user|assistant) ===\n?", re.MULTILINE)
_LOOKS_LIKE_MARKER = re.compile(r"^=+ *\w+ *=+ *$", re.MULTILINE)
_ID = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_]+)+")


class PromptError(InputError):
    """A prompt file that does not parse, or a render with missing or unexpected inputs."""


class UnknownPromptError(PromptError):
    """No prompt file has this id; the message lists the known ids."""


class PromptLockError(RagJudgeError):
    """``prompts lock`` refused: a locked version's text changed; its message says what."""


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt file, parsed: metadata, the file's hash and its compiled messages."""

    id: str
    version: int
    language: str
    inputs: tuple[str, ...]
    output: str
    description: str
    path: Path
    sha256: str
    """Of the file's bytes: the identity the lock file records."""
    messages: tuple[tuple[Role, jinja2.Template], ...] = field(repr=False, compare=False)
    reads: frozenset[str] = field(repr=False, compare=False)
    """Names the body reads and does not define itself (Jinja globals excluded)."""

    @property
    def ref(self) -> str:
        """``id.language@version#hash12``: what requests and results record."""
        return f"{self.id}.{self.language}@{self.version}#{self.sha256[:12]}"

    @property
    def output_model(self) -> type[BaseModel] | None:
        """The pydantic model the reply must validate as; None for ``yes_no`` and ``text``."""
        return None if self.output in UNPARSED else OUTPUT_MODELS[self.output]

    def render(self, **inputs: Any) -> tuple[Message, ...]:
        """The chat messages for these inputs, each stripped of surrounding whitespace.

        Raises:
            PromptError: an input is missing, unexpected, or fails inside the template.
        """
        name = f"prompt {self.id!r} ({self.language})"
        expected = ", ".join(self.inputs)
        if missing := [n for n in self.inputs if n not in inputs]:
            raise PromptError(f"{name} is missing input {missing[0]!r} (it takes: {expected})")
        if extra := sorted(set(inputs) - set(self.inputs)):
            raise PromptError(f"{name} got unexpected input {extra[0]!r} (it takes: {expected})")
        try:
            return tuple(
                Message(role=r, content=t.render(inputs).strip()) for r, t in self.messages
            )
        except (jinja2.TemplateError, TypeError, ValueError) as error:
            raise PromptError(f"{name} failed to render: {error}") from error

    def request(
        self,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        sample_index: int = 0,
        **inputs: Any,
    ) -> ChatRequest:
        """A chat request of the rendered messages, tagged with this prompt's :attr:`ref`."""
        return ChatRequest(
            messages=self.render(**inputs),
            temperature=temperature,
            max_tokens=max_tokens,
            sample_index=sample_index,
            prompt_id=self.ref,
        )


def parse_prompt(path: Path, *, prompt_id: str, language: str) -> PromptTemplate:
    """Parse one prompt file, checking its front matter against the id and language of its path.

    Raises:
        PromptError: bad front matter, body or Jinja syntax, naming the file.
    """
    raw = path.read_bytes()
    match = _FRONT_MATTER.match(raw.decode("utf-8").replace("\r\n", "\n"))
    if match is None:
        raise PromptError("no front matter between '---' lines at the top", source=str(path))
    meta = _front_matter(match.group(1), path)
    if (meta["id"], meta["language"]) != (prompt_id, language):
        where = f"id {meta['id']!r}, language {meta['language']!r}"
        raise PromptError(f"front matter says {where}; the path disagrees", source=str(path))
    messages, reads = _messages(match.group(2), path)
    return PromptTemplate(
        id=prompt_id,
        version=meta["version"],
        language=language,
        inputs=tuple(meta["inputs"]),
        output=meta["output"],
        description=str(meta["description"]).strip(),
        path=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        messages=messages,
        reads=reads,
    )


def _front_matter(text: str, path: Path) -> dict[str, Any]:
    try:
        meta = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise PromptError(f"front matter is not YAML: {error}", source=str(path)) from error
    if not isinstance(meta, dict) or any(k not in meta for k in FIELDS):
        raise PromptError(f"front matter needs the fields {', '.join(FIELDS)}", source=str(path))
    version, inputs, output = meta["version"], meta["inputs"], meta["output"]
    if type(version) is not int or version < 1:
        raise PromptError("must be an integer >= 1", source=str(path), field="version")
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise PromptError("must be a list of names", source=str(path), field="inputs")
    if output not in UNPARSED and output not in OUTPUT_MODELS:
        known = ", ".join([*OUTPUT_MODELS, *UNPARSED])
        raise PromptError(f"unknown {output!r} (known: {known})", source=str(path), field="output")
    return cast("dict[str, Any]", meta)


def _messages(
    body: str, path: Path
) -> tuple[tuple[tuple[Role, jinja2.Template], ...], frozenset[str]]:
    """Split the body at role markers and compile each message; also the names it reads."""
    parts = _MARKER.split(body)
    if stray := next(filter(None, map(_LOOKS_LIKE_MARKER.search, parts[0::2])), None):
        raise PromptError(f"unknown role marker {stray.group(0)!r}", source=str(path))
    if parts[0].strip() or len(parts) < 3:
        raise PromptError(
            "the body must start with a role line such as '=== system ==='", source=str(path)
        )
    pairs = list(zip(parts[1::2], parts[2::2], strict=True))
    env, reads = _environment(), set[str]()
    try:
        for _, source in pairs:
            reads |= jinja2.meta.find_undeclared_variables(env.parse(source))
        compiled = tuple((cast("Role", role), env.from_string(src)) for role, src in pairs)
    except jinja2.TemplateSyntaxError as error:
        raise PromptError(f"Jinja syntax: {error.message}", source=str(path)) from error
    return compiled, frozenset(reads - set(env.globals))


def default_root() -> Path:
    """The bundled prompts: ``rag_judge/_prompts`` in a wheel, else ``<repo>/prompts``."""
    bundled = importlib.resources.files("rag_judge") / "_prompts"
    if isinstance(bundled, Path) and bundled.is_dir():
        return bundled
    return Path(__file__).resolve().parents[2] / "prompts"


class PromptLibrary:
    """The prompt files under one directory (the bundled one, or a test's tmp_path)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def paths(self) -> dict[tuple[str, str], Path]:
        """``(id, language) -> file`` for every ``<group>/.../<step>.<lang>.md`` file."""
        found: dict[tuple[str, str], Path] = {}
        for path in sorted(self.root.rglob("*.md")):
            relative = path.relative_to(self.root).as_posix()[: -len(".md")]
            stem, _, language = relative.rpartition(".")
            if "/" in relative and stem:
                found[(stem, language)] = path
        return found

    def load(self, prompt_id: str, language: str = "en") -> PromptTemplate:
        """The prompt in ``language``, else in English.

        Raises:
            UnknownPromptError: no file has this id (the message lists the known ids).
        """
        for lang in dict.fromkeys((language, "en")):
            path = self.root / f"{prompt_id}.{lang}.md"
            if _ID.fullmatch(prompt_id) and path.is_file():
                return parse_prompt(path, prompt_id=prompt_id, language=lang)
        known = ", ".join(sorted({i for i, _ in self.paths()})) or "none"
        raise UnknownPromptError(f"unknown prompt {prompt_id!r} (known: {known})")

    def all(self) -> list[PromptTemplate]:
        """Every prompt file, parsed, sorted by id and language."""
        return [
            parse_prompt(p, prompt_id=i, language=lang) for (i, lang), p in self.paths().items()
        ]

    def read_json(self, name: str) -> dict[str, Any]:
        """A JSON object file next to the prompts (the lock or the fixtures); {} if absent."""
        path = self.root / name
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise PromptError(f"not valid JSON: {error}", source=str(path)) from error
        if not isinstance(data, dict):
            raise PromptError("must hold a JSON object", source=str(path))
        return data


@functools.lru_cache(maxsize=256)
def load_prompt(
    prompt_id: str, language: str = "en", *, root: Path | None = None
) -> PromptTemplate:
    """The prompt ``prompt_id`` (``claims/extract``) in ``language``, falling back to English.

    ``root`` points at another prompt directory (tests); the default is the bundled one.
    Cached: a process keeps the text it first loaded, so its refs stay consistent.

    Raises:
        UnknownPromptError: no such prompt (the message lists the known ids).
    """
    return PromptLibrary(root or default_root()).load(prompt_id, language)


def all_prompts(*, root: Path | None = None) -> list[PromptTemplate]:
    """Every prompt file, parsed, sorted by id and language."""
    return PromptLibrary(root or default_root()).all()


@functools.lru_cache(maxsize=16)
def prompt_languages(*, root: Path | None = None) -> tuple[str, ...]:
    """Languages some prompt file is written in, English first."""
    found = {language for _, language in PromptLibrary(root or default_root()).paths()}
    return tuple(sorted(found, key=lambda lang: (lang != "en", lang)))
