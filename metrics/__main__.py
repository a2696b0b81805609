"""Command line: python -m metrics report|screenshot|check|summary|timeseries|drops|subflows|losses
(see --help)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from metrics.read import LogFormatError, is_trial_dir, read_trial

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    """One sub-command per job; each names its input folder or file."""
    parser = argparse.ArgumentParser(
        prog="python -m metrics", description="Tidy tables, summary.csv and report.html."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser(
        "report", help="write summary.csv, aggregate.csv, report.html into a run folder"
    )
    report.add_argument("run_dir", type=Path, help="results/<run> (holding trials/)")
    shot = commands.add_parser("screenshot", help="full-page PNG of a report (headless Chromium)")
    shot.add_argument("report_html", type=Path)
    shot.add_argument("png", type=Path)
    shot.add_argument("--width-px", type=int, default=1280, help="page width (default 1280)")
    check = commands.add_parser(
        "check", help="open a report in headless Chromium: console errors, images decoded"
    )
    check.add_argument("report_html", type=Path)
    summary = commands.add_parser("summary", help="print one trial's summary row as JSON")
    summary.add_argument("trial_dir", type=Path)
    series = commands.add_parser(
        "timeseries", help="PNG of one trial over time: throughput, cwnd, buffer, stalls"
    )
    series.add_argument("trial_dir", type=Path)
    series.add_argument("png", type=Path)
    drops = commands.add_parser(
        "drops", help="every dropped-frame episode of a trial: cause, evidence, where the CPU went"
    )
    drops.add_argument("trial_dir", type=Path)
    tolerance = commands.add_parser(
        "control-drops",
        help="decoder-side drops over a run's control sessions (the tolerance's source)",
    )
    tolerance.add_argument("run_dir", type=Path)
    subflows = commands.add_parser(
        "subflows",
        help="CSV: the video connection's subflows at given times (cwnd, SRTT, CC state, "
        "bandwidth estimate, data sent, RTOs): why two trials of a cell parted ways",
    )
    subflows.add_argument("trial_dirs", type=Path, nargs="+", metavar="trial_dir")
    subflows.add_argument(
        "--at",
        default="6,60",
        metavar="S[,S...]",
        help="times on the trial clock, seconds (default 6,60)",
    )
    losses = commands.add_parser(
        "losses",
        help="CSV: the video connection's loss episodes on one path (time, packets lost, the "
        "window that met them); --per-trial: one line per trial",
    )
    losses.add_argument("trial_dirs", type=Path, nargs="+", metavar="trial_dir")
    losses.add_argument("--path", default="lte", help="the path's name (default lte)")
    losses.add_argument(
        "--per-trial",
        action="store_true",
        help="one line per trial: episodes, packets lost, the first episode, the steady window",
    )
    losses.add_argument(
        "--steady-after",
        type=float,
        default=60.0,
        metavar="S",
        help="with --per-trial: the steady window is the median over the episodes after S "
        "seconds (default 60)",
    )
    return parser


def _per_trial_csv(command: str, trial_dirs: list[Path], rows_of) -> int:
    """One CSV over the trials: each row of `rows_of(trial_dir)` (dataclasses) after the
    trial's identity. Exits 2 naming what is missing."""
    import dataclasses

    import pandas as pd

    from metrics.read import read_json

    missing = [str(d) for d in trial_dirs if not is_trial_dir(d)]
    if missing:
        print(f"metrics {command}: no trial.json in {', '.join(missing)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    rows = []
    for trial_dir in trial_dirs:
        trial = read_json(trial_dir / "trial.json")
        spec = trial.get("spec", {})
        try:
            found = rows_of(trial_dir)
        except (FileNotFoundError, ValueError) as exc:
            print(f"metrics {command}: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        for row in found:
            rows.append(
                {
                    "trial_id": trial.get("trial_id"),
                    # An emulated trial.json names no engine; a simulated one does.
                    "engine": trial.get("engine", "emulate"),
                    "cc": spec.get("cc"),
                    "sched": spec.get("sched"),
                    "rep": spec.get("rep"),
                    **dataclasses.asdict(row),
                }
            )
    pd.DataFrame(rows).to_csv(sys.stdout, index=False, float_format="%.3f")
    return 0


def _subflows(trial_dirs: list[Path], at: str) -> int:
    from metrics.subflow_state import states_at

    try:
        times = [float(x) for x in at.split(",") if x.strip()]
    except ValueError:
        print(f"metrics subflows: --at {at!r}: give seconds, e.g. 6,60", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not times or any(t < 0 for t in times):
        print(f"metrics subflows: --at {at!r}: give seconds >= 0, e.g. 6,60", file=sys.stderr)
        return EXIT_BAD_INPUT
    return _per_trial_csv("subflows", trial_dirs, lambda d: states_at(d, times))


def _losses(trial_dirs: list[Path], path: str, per_trial: bool, steady_after_s: float) -> int:
    from metrics.subflow_state import loss_episodes, summarise_losses

    if steady_after_s < 0:
        print(f"metrics losses: --steady-after {steady_after_s}: give seconds >= 0",
              file=sys.stderr)  # fmt: skip
        return EXIT_BAD_INPUT
    if per_trial:
        return _per_trial_csv(
            "losses",
            trial_dirs,
            lambda d: [summarise_losses(loss_episodes(d, path), path, steady_after_s)],
        )
    return _per_trial_csv("losses", trial_dirs, lambda d: loss_episodes(d, path))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    if args.command == "report":
        from metrics.report import NotARunError, build

        try:
            print(build(args.run_dir))
        except NotARunError as exc:
            print(f"metrics report: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return 0
    if args.command in ("screenshot", "check"):
        from metrics import browser

        if not args.report_html.is_file():
            print(f"metrics {args.command}: {args.report_html}: no such file", file=sys.stderr)
            return EXIT_BAD_INPUT
        if args.command == "screenshot":
            result = browser.screenshot(args.report_html, args.png, args.width_px)
        else:
            result = browser.check_render(args.report_html)
        for message in result.console_messages:
            print(f"console: {message}", file=sys.stderr)
        print(
            f"images decoded: {result.images_ok}/{result.images_total}; "
            f"console messages: {len(result.console_messages)}"
        )
        if args.command == "screenshot":
            print(args.png)
        return 0 if result.ok else 1
    if args.command == "timeseries":
        from metrics import plots
        from metrics.tables import path_intervals_table, samples_table, stalls_table

        if not is_trial_dir(args.trial_dir):
            print(f"metrics timeseries: {args.trial_dir}: no trial.json there", file=sys.stderr)
            return EXIT_BAD_INPUT
        trial = read_trial(args.trial_dir, strict=False)
        for error in trial.errors:
            print(f"metrics timeseries: {error}", file=sys.stderr)
        figure = plots.timeseries_figure(
            path_intervals_table([trial]),
            samples_table([trial]),
            stalls_table([trial]),
            trial.trial_id,
        )
        figure.savefig(args.png, dpi=100, bbox_inches="tight")
        print(args.png)
        return 0
    if args.command == "summary":
        from metrics.tables import summary_table

        if not is_trial_dir(args.trial_dir):
            print(f"metrics summary: {args.trial_dir}: no trial.json there", file=sys.stderr)
            return EXIT_BAD_INPUT
        try:
            trial = read_trial(args.trial_dir, strict=True)
        except LogFormatError as exc:
            print(f"metrics summary: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        row = summary_table([trial]).iloc[0].to_dict()
        print(json.dumps(row, indent=2, default=str))
        return 0
    if args.command == "control-drops":
        from metrics.drops import control_distribution
        from metrics.report import SUMMARY_CSV

        summary_csv = args.run_dir / SUMMARY_CSV
        if not summary_csv.is_file():
            print(
                f"metrics control-drops: {summary_csv}: none (run `report` first)", file=sys.stderr
            )
            return EXIT_BAD_INPUT
        import pandas as pd

        rows = pd.read_csv(summary_csv).to_dict("records")
        print(json.dumps(control_distribution(rows), indent=1))
        return 0
    if args.command == "subflows":
        return _subflows(args.trial_dirs, args.at)
    if args.command == "losses":
        return _losses(args.trial_dirs, args.path, args.per_trial, args.steady_after)
    if args.command == "drops":
        from metrics.drops import attribute_drops, where_cpu_went

        if not is_trial_dir(args.trial_dir):
            print(f"metrics drops: {args.trial_dir}: no trial.json there", file=sys.stderr)
            return EXIT_BAD_INPUT
        trial = read_trial(args.trial_dir, strict=False)
        player = trial.player.to_dict("records") if "event" in trial.player.columns else []
        cpu = trial.cpu.to_dict("records") if "event" in trial.cpu.columns else []
        for episode in attribute_drops(player, cpu):
            line = {
                "t_s": round(episode.t_s, 3),
                "frames": episode.frames,
                "buffer_s": episode.buffer_s,
                "cause": episode.cause,
                "evidence": episode.evidence,
                "cpu": where_cpu_went(cpu, episode.t_s),
            }
            print(json.dumps(line, default=str))
        return 0
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
