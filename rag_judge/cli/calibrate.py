"""``rag-judge calibrate``: how far a judge agrees with human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rag_judge.cli.common import (
    bootstrap_options,
    call_options,
    echo_cost,
    friendly_errors,
    json_mode_option,
    judge_mode_options,
    make_console,
)
from rag_judge.cli.scale_out import echo_stages, ray_target, scale_out, scale_out_options
from rag_judge.judges import DEFAULT_CALIBRATED
from rag_judge.report.tables import to_rich


@click.command("calibrate")
@click.option(
    "--scores",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Judge output of `rag-judge score` (JSONL).",
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    help='Human labels (JSONL): {"id", "label"} per row, {"id", "claim", "label"} with '
    '--level claim, {"id_a", "id_b", "preferred": "a"|"b"|"tie"} with --kind pairwise.',
)
@click.option(
    "--run",
    "run_set",
    metavar="EVAL_SET",
    help="Instead of --scores/--labels: judge a bundled calibration set (begin_dev, wice_dev, "
    "alce_utility, cmrc_short_answers) and calibrate against its labels.",
)
@click.option(
    "--metric",
    help=f"Judge metric to calibrate (default: {DEFAULT_CALIBRATED}; with --run, the set's own).",
)
@click.option(
    "--kind",
    type=click.Choice(["binary", "ordinal", "continuous", "pairwise"]),
    help="What the labels are (default: binary; with --run, from the set's manifest).",
)
@click.option(
    "--level",
    type=click.Choice(["sample", "claim"]),
    default="sample",
    show_default=True,
    help="A label per row, or per claim of the judge's output.",
)
@click.option("--label-field", default="label", show_default=True, help="The label's field.")
@click.option(
    "--mapping",
    metavar="JSON",
    help='Raw label -> number, null to exclude, e.g. \'{"yes": 1, "no": 0, "generic": null}\'.',
)
@click.option(
    "--scale",
    metavar="LOW-HIGH",
    help="Ordinal scale the judge's [0,1] value is mapped onto (default: the labels' range).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    help="Binary: supported iff value >= X, a score in [0, 1] (default 0.5).",
)
@click.option(
    "--select",
    type=click.Choice(["balanced_accuracy", "f1", "f_beta"]),
    help="Binary: choose the threshold on a dev half instead; figures on the held-out half.",
)
@click.option(
    "--beta",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Beta of the unsupported class's F-beta (and of --select f_beta).",
)
@click.option(
    "--unlabelled",
    type=click.Path(dir_okay=False, path_type=Path),
    help="More scores without labels: adds a PPI estimate of the mean human label.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write metrics.csv, summary.md, reliability.png, disagreements.jsonl and report.html "
    "here (with --run also scores.jsonl; default calibration_EVAL_SET).",
)
@click.option(
    "--limit", type=click.IntRange(min=1), help="--run: judge N samples, balanced over labels."
)
@click.option("--model", help="--run: judge provider/model (default: settings, then local).")
@click.option("--judge", help="--run: same as --model (the name the sweep and settings use).")
@click.option("--base-url", help="--run: OpenAI-compatible server for openai/ and litellm/.")
@click.option("--concurrency", type=click.IntRange(min=1), help="--run: model calls in flight.")
@click.option("--no-cache", is_flag=True, help="--run: do not read or write the response cache.")
@bootstrap_options("Seed of the bootstrap and the dev split.")
@scale_out_options("--run's rows")
@call_options("--run: ")
@judge_mode_options
@json_mode_option
@friendly_errors
def calibrate_command(
    scores: Path | None,
    labels: Path | None,
    run_set: str | None,
    metric: str | None,
    kind: str | None,
    level: str,
    label_field: str,
    mapping: str | None,
    scale: str | None,
    threshold: float | None,
    select: str | None,
    beta: float,
    unlabelled: Path | None,
    output: Path | None,
    limit: int | None,
    no_cache: bool,
    resamples: int,
    seed: int,
    judge_mode: str | None,
    no_reasons: bool,
    executor: str,
    workers: int,
    batch: bool,
    **settings: Any,
) -> None:
    """Measure how far a judge agrees with human labels, every figure with a bootstrap CI.

    Give --scores (from `rag-judge score`) and --labels, or --run a bundled calibration set:
    its samples are judged (cached: re-runs are free), scores.jsonl is written to the output
    folder, and the judge is calibrated against the set's labels. Binary labels get accuracy,
    balanced accuracy, precision/recall/F1 of the unsupported class, kappa, alpha, AUC, Brier,
    ECE and correlations; ordinal ones weighted kappa, alpha and rank correlations. Prints the
    figures; -o also writes the report.
    """
    from rag_judge.jobs import calibrate as calibration_run
    from rag_judge.report.calibration_html import (
        figure_table,
        summary_lines,
        write_calibration_report,
    )

    if threshold is not None and select is not None:
        raise click.UsageError("give --threshold or --select, not both")
    if select == "f1" and beta != 1.0:
        raise click.UsageError("--select f1 is F-beta with beta 1; use --select f_beta")
    objective: Any = {"f1": "f_beta"}.get(select or "", select)
    common: dict[str, Any] = {
        "threshold": threshold,
        "select": objective,
        "beta": beta,
        "n_resamples": resamples,
        "seed": seed,
    }
    if run_set is not None:
        given: dict[str, object] = {"--scores": scores, "--labels": labels, "--kind": kind}
        given |= {"--unlabelled": unlabelled, "--mapping": mapping, "--scale": scale}
        if extra := [name for name, value in given.items() if value is not None]:
            raise click.UsageError(f"--run takes the set's own scores and labels, not {extra[0]}")
        from rag_judge.cli.progress import progress_step
        from rag_judge.data.calibration_sets import load_calibration_set
        from rag_judge.runtime.executors.batched import state_path_for
        from rag_judge.runtime.outputs import check_output_folder
        from rag_judge.runtime.settings import load_settings

        chosen = load_settings(settings)
        target = ray_target(executor, workers, batch, no_cache, chosen)
        loaded = load_calibration_set(run_set)  # input errors before the progress bar
        calibration_run.calibrated_metric(loaded, metric)
        out = output or Path(f"calibration_{Path(run_set).name}")
        check_output_folder(out)
        if not no_cache:
            check_output_folder(chosen.cache_dir, what="cache directory")
        with progress_step("judging") as step:
            ways_out = scale_out(target, batch, step)
            run = calibration_run.run_calibration(
                loaded,
                out,
                metric=metric,
                limit=limit,
                settings=chosen,
                cache=not no_cache,
                progress=None if target is not None else lambda row: step.finished(row.failed),
                on_start=lambda n: step.update(total=n),
                scale=ways_out,
                mode=judge_mode,
                reasons=not no_reasons,
                **common,
            )
        report, output = run.report, out
        if batch:
            echo_stages(run.stages, state_path_for(run.scores_path))
        click.echo(f"scores of {len(run.evaluation)} samples in {run.scores_path}", err=True)
        echo_cost(run.evaluation.ledger)
    else:
        if scores is None or labels is None:
            raise click.UsageError("give --scores and --labels, or --run EVAL_SET")
        used = {"--limit": limit, **{f"--{k.replace('_', '-')}": v for k, v in settings.items()}}
        switches = (("--no-cache", no_cache), ("--no-reasons", no_reasons), ("--batch", batch))
        flags = [name for name, on in switches if on]
        if executor != "local":
            flags.append("--executor")
        used["--judge-mode"] = judge_mode
        if extra := [name for name, value in used.items() if value is not None] + flags:
            raise click.UsageError(f"{extra[0]} applies to --run only")
        common |= {"kind": kind or "binary", "level": level}
        if output is not None:
            from rag_judge.report.calibration_html import FILES
            from rag_judge.runtime.outputs import check_distinct, check_output_folder

            check_output_folder(output)
            check_distinct(
                {"--scores": scores, "--labels": labels, "--unlabelled": unlabelled},
                {f"-o {name}": output / name for name in FILES},
            )
        report = calibration_run.calibrate_files(
            scores,
            labels,
            metric=metric or DEFAULT_CALIBRATED,
            label_field=label_field,
            mapping=None if mapping is None else calibration_run.parse_mapping(mapping),
            unlabelled=unlabelled,
            scale=None if scale is None else calibration_run.parse_scale(scale),
            **common,
        )
    header, rows = figure_table(report)
    title = f"{report.metric} vs {report.kind} human labels: {report.n} compared"
    make_console().print(to_rich(header, rows, title=title))
    for line in summary_lines(report):
        click.echo(line)
    if output is not None:
        written = write_calibration_report(report, output)
        click.echo(f"report: {', '.join(str(p) for p in written.paths.values())}", err=True)
