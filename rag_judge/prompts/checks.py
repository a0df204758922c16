"""Checks on the prompt files: the lock that catches unversioned edits, and validation.

``prompts.lock.json`` keeps the sha256 of every released (id, language, version); a file whose
text changed without a new version fails :func:`validate_prompts` (and the test suite), and
:func:`lock_prompts` records new versions but never rewrites a released one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rag_judge.prompts.templates import (
    FIXTURES_FILE,
    LANGUAGES,
    LOCK_FILE,
    PromptError,
    PromptLibrary,
    PromptLockError,
    PromptTemplate,
    default_root,
    parse_prompt,
)


def validate_prompts(*, root: Path | None = None) -> list[str]:
    """Every problem in the prompt files, one line each; empty when all is well.

    Checks, per file: front matter against the path, inputs the body reads against the
    declared ones, the lock entry of its version, a render with its fixture, and that the
    rendered text quotes every JSON key and enum value the output model requires (a model
    cannot fill keys it was never told). Per id: every language in LANGUAGES exists, with the
    inputs and output of the English file.
    """
    library = PromptLibrary(root or default_root())
    problems: list[str] = []
    templates: list[PromptTemplate] = []
    for (prompt_id, language), path in library.paths().items():
        try:
            templates.append(parse_prompt(path, prompt_id=prompt_id, language=language))
        except PromptError as error:
            problems.append(str(error))
    try:
        lock, fixtures = library.read_json(LOCK_FILE), library.read_json(FIXTURES_FILE)
    except PromptError as error:
        return [*problems, str(error)]
    for template in templates:
        problems += _check_file(template, lock, fixtures)
    return problems + _check_languages(templates)


def lock_prompts(*, root: Path | None = None) -> list[str]:
    """Record in the lock file the hash of every prompt version not in it yet.

    Returns:
        The refs newly locked (empty when the lock was up to date).

    Raises:
        PromptLockError: a locked version's file changed; nothing is written.
        PromptError: a prompt file does not parse.
    """
    library = PromptLibrary(root or default_root())
    lock = library.read_json(LOCK_FILE)
    added: list[str] = []
    changed: list[str] = []
    for template in library.all():
        versions = lock.setdefault(f"{template.id}.{template.language}", {})
        locked = versions.get(str(template.version))
        if locked is None:
            versions[str(template.version)] = template.sha256
            added.append(template.ref)
        elif locked != template.sha256:
            changed.append(_changed(template, versions))
    if changed:
        raise PromptLockError("\n".join(changed))
    if added:
        ordered = {
            key: dict(sorted(lock[key].items(), key=lambda item: int(item[0])))
            for key in sorted(lock)
        }
        text = json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"
        (library.root / LOCK_FILE).write_text(text, encoding="utf-8")
    return added


def _changed(template: PromptTemplate, versions: dict[str, str]) -> str:
    bump = max(int(v) for v in versions) + 1
    return (
        f"prompt {template.id}.{template.language} changed without a version bump: "
        f"{template.path} no longer has the hash locked for version {template.version}; "
        f"set `version: {bump}` in its front matter, then run `rag-judge prompts lock`"
    )


def _check_file(
    template: PromptTemplate, lock: dict[str, Any], fixtures: dict[str, Any]
) -> list[str]:
    name = f"{template.id}.{template.language}"
    problems: list[str] = []
    if (used := set(template.reads)) != set(template.inputs):
        problems.append(
            f"{name}: the body reads {sorted(used)}, inputs declares {sorted(template.inputs)}"
        )
    versions = lock.get(name, {})
    if str(template.version) not in versions:
        problems.append(f"{name}@{template.version} is not locked; run `rag-judge prompts lock`")
    elif versions[str(template.version)] != template.sha256:
        problems.append(_changed(template, versions))
    example = fixtures.get(template.id, {}).get(template.language)
    if not isinstance(example, dict):
        return [*problems, f"{name}: no example inputs in {FIXTURES_FILE}"]
    try:
        messages = template.render(**example)
    except PromptError as error:
        return [*problems, str(error)]
    if template.output_model is None:
        if messages[-1].role != "user":
            problems.append(f"{name}: a {template.output} prompt must end with a user message")
        return problems
    text = "\n".join(m.content for m in messages)
    unsaid = sorted(
        w for w in _schema_words(template.output_model.model_json_schema()) if f'"{w}"' not in text
    )
    if unsaid:
        problems.append(f"{name}: the rendered prompt never quotes {unsaid} (JSON keys/values)")
    return problems


def _schema_words(node: Any) -> set[str]:
    """Required keys and enum values anywhere in a JSON schema."""
    if isinstance(node, list):
        return set().union(*map(_schema_words, node))
    if not isinstance(node, dict):
        return set()
    own = {str(w) for k in ("required", "enum") if isinstance(node.get(k), list) for w in node[k]}
    return own.union(*map(_schema_words, node.values()))


def _check_languages(templates: list[PromptTemplate]) -> list[str]:
    by_id: dict[str, dict[str, PromptTemplate]] = {}
    for template in templates:
        by_id.setdefault(template.id, {})[template.language] = template
    problems = []
    for prompt_id, versions in sorted(by_id.items()):
        if missing := [lang for lang in LANGUAGES if lang not in versions]:
            problems.append(f"{prompt_id}: no file for language {', '.join(missing)}")
        english = versions.get("en")
        for lang, other in versions.items():
            if english and (set(other.inputs), other.output) != (
                set(english.inputs),
                english.output,
            ):
                problems.append(f"{prompt_id}.{lang}: inputs or output differ from the en file")
    return problems
