"""A tutorial page's steps, run as its reader would run them: in page order, in a folder of
their own, with ``rag-judge`` on the PATH.

The steps are the page's marked blocks (``<!-- tutorial: ... -->`` before a block, read by
``docs/tools/examples_table.py``'s ``steps``): ``file NAME`` writes the block to NAME; ``run``
runs the block's lines in order, stopping at the first that fails (as ``bash -e``), and expects
exit status 0 (``run exit=N``: N); ``label`` starts the block's one ``rag-judge label`` command
and labels its rows through the page's own HTTP API (what the page's script sends), the labels
coming from a function of the row, as a person's would; ``output`` runs a recorded session's
``$ `` command and compares what it prints (stdout, then stderr) with the rest of the block,
verbatim. Only the environment differs from a reader's: the models are the ones the settings
in it name (the tests point them at a fake OpenAI server), as a reader could set them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs_site import DOCS, ROOT, examples_module

WAIT = 300.0
"""Seconds a step may take before the test gives up on it (a guard against a hang only)."""
Labeller = Callable[[dict[str, Any]], int | None]
"""A row of the labelling page -> the label given (1, 0; None skips it)."""


@dataclass(frozen=True)
class Ran:
    """One step and what it did."""

    step: str
    body: str
    returncode: int
    stdout: str
    stderr: str


def reader_folder(tmp_path: Path) -> Path:
    """An empty working folder that sees the repository's bundled data where a reader in a
    clone of it does (``eval_sets/``, ``benchmarks/``), linked, never copied or written."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("eval_sets", "benchmarks"):
        (work / name).symlink_to(ROOT / name, target_is_directory=True)
    return work


def reader_env(tmp_path: Path, settings: Mapping[str, str]) -> dict[str, str]:
    """A reader's environment: ``rag-judge`` and ``python`` of this install first on the PATH,
    a cache and an (empty) config file of the test's own, and ``settings``
    (``RAG_JUDGE_MODEL``...). Nothing of this machine's settings or keys."""
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    return {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "RAG_JUDGE_CONFIG": str(config),
        **settings,
    }


def steps_of(page: str) -> list[tuple[str, str]]:
    """The marked steps of ``docs/<page>``."""
    return list(examples_module().steps((DOCS / page).read_text(encoding="utf-8")))


def run_tutorial(
    page: str, work: Path, env: Mapping[str, str], *, labeller: Labeller | None = None
) -> list[Ran]:
    """Every step of the page in order; fails at the first whose exit status is not the
    page's, saying which and what it printed."""
    done: list[Ran] = []
    for step, body in steps_of(page):
        kind, _, rest = step.partition(" ")
        if kind == "file":
            target = work / rest.strip()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
            ran = Ran(step, body, 0, "", "")
        elif kind == "run":
            ran = _run(step, body, work, env)
            expected = int(rest.removeprefix("exit=")) if rest.startswith("exit=") else 0
            assert ran.returncode == expected, _said(page, ran, expected)
        elif kind == "output":
            command, recorded = recording(body)
            ran = _run(step, command, work, env)
            assert ran.returncode == 0, _said(page, ran, 0)
            assert ran.stdout + ran.stderr == recorded, f"{page}: {command} no longer prints that"
        elif kind == "label":
            assert labeller is not None, f"{page}: a label step needs a labeller"
            ran = _label(step, body, work, env, labeller)
            assert ran.returncode == 0, _said(page, ran, 0)
        else:
            raise AssertionError(f"{page}: unknown step {step!r}")
        done.append(ran)
    return done


def recording(body: str) -> tuple[str, str]:
    """A recorded session's command (the ``$ `` line and its continuation lines, without the
    prompt) and what it printed (the rest of the block)."""
    lines = body.splitlines(keepends=True)
    assert lines[0].startswith("$ "), f"a recorded output starts with its command: {lines[0]}"
    end = next(i for i, line in enumerate(lines) if not line.rstrip().endswith("\\"))
    return "".join(lines[: end + 1])[2:], "".join(lines[end + 1 :])


def _said(page: str, ran: Ran, expected: int) -> str:
    return (
        f"{page}: step exited {ran.returncode}, the page says {expected}:\n{ran.body}\n"
        f"--- stdout\n{ran.stdout[-3000:]}\n--- stderr\n{ran.stderr[-3000:]}"
    )


def lines_of(body: str) -> list[str]:
    """A shell block's commands, one per line, continuation lines joined."""
    return [line.strip() for line in re.sub(r"\s*\\\n\s*", " ", body).splitlines() if line.strip()]


def _run(step: str, body: str, work: Path, env: Mapping[str, str]) -> Ran:
    """The block's lines in order, stopping at the first that fails (``bash -e``): a
    ``rag-judge`` line in this process (the same command line, parsed by the same CLI; the
    start-up imports are paid once per test session, not per line), any other line by bash."""
    out, err, code = [], [], 0
    for line in lines_of(body):
        code, stdout, stderr = (
            _rag_judge(line, work, env) if line.startswith("rag-judge ") else _bash(line, work, env)
        )
        out.append(stdout)
        err.append(stderr)
        if code != 0:
            break
    return Ran(step, body, code, "".join(out), "".join(err))


def _bash(line: str, work: Path, env: Mapping[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line],
        cwd=work,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _rag_judge(line: str, work: Path, env: Mapping[str, str]) -> tuple[int, str, str]:
    """``rag-judge ...`` run by click's test runner in ``work``, with ``env`` as the whole
    RAG_JUDGE_ environment (this machine's own settings unset); modules it imported from
    ``work`` (a reader's ``--rag my_rag:fn``) are forgotten afterwards."""
    from click.testing import CliRunner

    from rag_judge.cli import main

    given: dict[str, str | None] = {k: None for k in os.environ if k.startswith("RAG_JUDGE_")}
    given.update(env)
    before = set(sys.modules)
    with contextlib.chdir(work):
        result = CliRunner().invoke(main, shlex.split(line)[1:], env=given, prog_name="rag-judge")
    for name in set(sys.modules) - before:
        if str(getattr(sys.modules[name], "__file__", "") or "").startswith(str(work)):
            del sys.modules[name]
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _label(step: str, body: str, work: Path, env: Mapping[str, str], labeller: Labeller) -> Ran:
    """Start the block's ``rag-judge label``, answer its page until no row is left, stop it with
    Ctrl-C (SIGINT, to the process this started), as a person closing it would."""
    [command] = lines_of(body)
    assert command.startswith("rag-judge label "), command
    server = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=work,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stderr is not None
    said: list[str] = []
    try:
        url = None
        for line in server.stderr:
            said.append(line)
            if found := re.search(r"label at (http://127\.0\.0\.1:\d+/\S+/)", line):
                url = found.group(1)
                break
        assert url is not None, f"the labelling server never said its address: {''.join(said)}"
        state = _call(url + "api/state")
        while state["row"] is not None:
            row = state["row"]
            state = _call(url + "api/label", {"id": row["id"], "label": labeller(row)})
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=WAIT)
    return Ran(step, body, server.returncode, out, "".join(said) + err)


def _call(url: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page's script does: GET the state, or POST a label and get the new state."""
    data = None if payload is None else json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json"} if data is not None else {}
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        return json.loads(response.read().decode("utf-8"))  # type: ignore[no-any-return]
