"""Figures from tidy tables (metrics/tables.py, metrics/aggregate.py); no file reading.

Built with matplotlib's object API (`matplotlib.figure.Figure`, Agg canvas), so nothing
needs a display and no global pyplot state is shared between figures.

* `video_figure`: per scenario, stalls and dropped frames by CC (groups) x scheduler
  (bars), mean with 95% CI error bars (seed 002, Figures 4, 6, 8, 10).
* `transmission_figure`: per scenario, packets delivered and retransmissions per path
  (seed 002, Figures 5, 7, 9, 11).
* `cdf_figure`: per scenario and metric, the empirical CDF of each cell's per-trial values.
* `timeseries_figure`: one trial: per-path throughput, cwnd, buffer level; stalls shaded.
"""

from __future__ import annotations

import base64
import io
import math

import matplotlib

matplotlib.use("Agg")  # before anything else imports pyplot: headless, deterministic

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

PATH_COLOURS = {"wifi": "tab:blue", "lte": "tab:orange"}
STALL_COLOUR = "tab:red"


def figure_png_base64(figure: Figure, dpi: int = 100) -> str:
    """PNG bytes of a figure, base64 for a data: URI."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def grouped_bars(
    ax: Axes, agg: pd.DataFrame, metric: str, ylabel: str, *, clip_at_zero: bool = True
) -> None:
    """Bars of `metric`'s mean: CC on the x axis (groups), one bar per scheduler, error bars
    = its 95 % interval (metrics/stats.py). One repetition: no error bar (interval NaN)."""
    rows = agg[agg["metric"] == metric].copy()
    ax.set_ylabel(ylabel)
    if rows.empty:
        _no_data(ax, "no data from counted trials")
        return
    # Algorithm options (--cc-opt/--sched-opt) are part of the CC's and scheduler's name.
    for name, options in (("cc", "cc_opts"), ("sched", "sched_opts")):
        if options in rows.columns:
            rows[name] = [
                f"{n} {o}" if o else n
                for n, o in zip(rows[name], rows[options].fillna(""), strict=True)
            ]
    # A group is one CC; every other configuration column that varies in this scenario
    # (transport, player, clip length) is named under it, so no two bars share a slot.
    varying = [c for c in ("transport", "player", "video_duration_s") if rows[c].nunique() > 1]
    rows["group"] = [
        f"{cc}\n({', '.join(str(v) for v in others)})" if varying else str(cc)
        for cc, others in zip(
            rows["cc"], rows[varying].itertuples(index=False, name=None), strict=True
        )
    ]
    groups = list(dict.fromkeys(rows.sort_values([*varying, "cc"])["group"]))
    # A transport without a scheduler (the control transfer, tcp-*) has none: name it "-"
    # (missing values would stay NaN under astype(str) and could not be sorted with names).
    rows["sched"] = rows["sched"].astype(object).where(rows["sched"].notna(), "-").astype(str)
    scheds = sorted(rows["sched"].unique())
    width = 0.8 / len(scheds)
    x = np.arange(len(groups))
    for i, sched in enumerate(scheds):
        bars = rows[rows["sched"] == sched].set_index("group").reindex(groups)
        means = bars["mean"].astype(float).to_numpy()
        # The interval (metrics/stats.py) need not be symmetric; NaN (n = 1): no error bar.
        errors = np.vstack([
            np.clip(means - bars["ci95_low"].astype(float).to_numpy(), 0, None),
            np.clip(bars["ci95_high"].astype(float).to_numpy() - means, 0, None),
        ])  # fmt: skip
        ax.bar(
            x + (i - (len(scheds) - 1) / 2) * width,
            means,
            width,
            yerr=errors,
            capsize=3,
            label=sched,
        )
    # Counts and sizes: a CI reaching below zero is clipped. QoE may be negative (not clipped).
    if clip_at_zero:
        ax.set_ylim(bottom=0)
    else:
        ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(x, groups)
    ax.set_xlabel("congestion control")
    ax.grid(axis="y", alpha=0.3)


def scheduler_legend(figure: Figure, axes: list[Axes]) -> None:
    """One legend for the whole figure, below the panels, so it never hides a bar."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if handles:
        figure.legend(
            list(handles.values()),
            list(handles),
            title="scheduler",
            loc="outside lower center",
            ncols=min(len(handles), 8),
            fontsize="small",
        )


def _no_data(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.set_yticks([])


def video_figure(agg: pd.DataFrame, scenario: str) -> Figure:
    """(a) stalls (buffer underflows) beside (b) discarded frames (picture discards: live media
    skipped + every dropped frame, metrics/discards.py), as seed 002's figures put
    them; (c) network-attributable and (d) decoder-side dropped frames (metrics/drops.py),
    (e) linear QoE per segment (metrics/qoe.py), (f) live latency (live mode only)."""
    rows = agg[agg["scenario"] == scenario]
    figure = Figure(figsize=(15, 7.5), layout="constrained")
    (stalls, discards, network), (decoder, qoe, latency) = figure.subplots(2, 3)
    grouped_bars(stalls, rows, "stalls", "stalls per session")
    stalls.set_title("(a) stalls")
    grouped_bars(discards, rows, "discarded_frames", "frames per session")
    discards.set_title("(b) discarded frames (skipped live + dropped)")
    if not rows["metric"].isin(["dropped_frames_network"]).any():
        grouped_bars(network, rows, "dropped_frames", "dropped frames per session")
        network.set_title("(c) dropped frames (not attributed)")
    else:
        grouped_bars(network, rows, "dropped_frames_network", "frames per session")
        network.set_title("(c) dropped frames: network-attributable")
    grouped_bars(decoder, rows, "dropped_frames_decoder", "frames per session")
    decoder.set_title("(d) dropped frames: decoder-side (CPU/QoS evidence)")
    grouped_bars(qoe, rows, "qoe_lin_per_segment", "QoE per segment", clip_at_zero=False)
    qoe.set_title("(e) linear QoE per segment (Pensieve QoE_lin)")
    grouped_bars(latency, rows, "live_latency_median_s", "seconds")
    latency.set_title("(f) live latency, median (live mode)")
    figure.suptitle(f"{scenario}: video performance (mean, 95% interval)")
    scheduler_legend(figure, [stalls, discards, network, decoder, qoe, latency])
    return figure


def transmission_figure(agg: pd.DataFrame, scenario: str, paths: list[str]) -> Figure:
    """Packets delivered downstream and retransmitted packets, one panel per path."""
    rows = agg[agg["scenario"] == scenario]
    figure = Figure(figsize=(11, 7), layout="constrained")
    axes = figure.subplots(2, len(paths), squeeze=False)
    for column, path in enumerate(paths):
        grouped_bars(axes[0][column], rows, f"pkts_down_{path}", "packets delivered (down)")
        axes[0][column].set_title(f"{path}: packets delivered")
        grouped_bars(axes[1][column], rows, f"retrans_pkts_{path}", "packets retransmitted")
        axes[1][column].set_title(f"{path}: retransmissions")
    figure.suptitle(f"{scenario}: transmission per path (mean, 95% CI)")
    scheduler_legend(figure, [ax for row in axes for ax in row])
    return figure


def timeseries_figure(
    intervals: pd.DataFrame, samples: pd.DataFrame, stalls: pd.DataFrame, trial_id: str
) -> Figure:
    """One trial over time: per-path throughput (emulator, down), per-path cwnd of the
    data sender, player buffer level and bitrate on screen; every stall shaded."""
    figure = Figure(figsize=(11, 7.5), layout="constrained")
    throughput_ax, cwnd_ax, buffer_ax = figure.subplots(3, 1, sharex=True)
    mine = intervals[intervals["trial_id"] == trial_id]
    for path, rows in mine.groupby("path", sort=True):
        colour = PATH_COLOURS.get(str(path))
        throughput_ax.plot(rows["t_s"], rows["down_bps"] / 1e6, label=str(path), color=colour)
        cwnd = rows.dropna(subset=["cwnd_bytes"])
        cwnd_ax.plot(cwnd["t_s"], cwnd["cwnd_bytes"] / 1e3, label=str(path), color=colour)
    throughput_ax.set_ylabel("throughput down\n(Mb/s)")
    cwnd_ax.set_ylabel("cwnd (kB)")
    if mine["cwnd_bytes"].notna().sum() == 0:
        _no_data(cwnd_ax, "no transport samples in this trial")
    if mine["down_bps"].notna().sum() == 0:
        _no_data(throughput_ax, "no emulator samples in this trial")
    player = samples[samples["trial_id"] == trial_id]
    buffer_ax.plot(player["t_s"], player["buffer_s"], color="tab:green", label="buffer")
    if player.empty:
        _no_data(buffer_ax, "no player samples in this trial")
    elif player["bitrate_bps"].notna().any():
        # What is on screen, on its own axis: quality drops often explain the buffer.
        bitrate_ax = buffer_ax.twinx()
        bitrate_ax.step(
            player["t_s"],
            player["bitrate_bps"].astype(float) / 1e6,
            where="post",
            color="grey",
            linestyle="--",
            linewidth=1,
        )
        bitrate_ax.set_ylabel("bitrate on screen\n(Mb/s, dashed)", color="grey")
        bitrate_ax.set_ylim(bottom=0)
    buffer_ax.set_ylabel("buffer (s)")
    buffer_ax.set_xlabel("time since trial start (s)")
    trial_stalls = stalls[stalls["trial_id"] == trial_id]
    for ax in (throughput_ax, cwnd_ax, buffer_ax):
        for start_s, end_s in zip(trial_stalls["start_s"], trial_stalls["end_s"], strict=True):
            if not (math.isnan(start_s) or math.isnan(end_s)):
                ax.axvspan(start_s, end_s, color=STALL_COLOUR, alpha=0.2, linewidth=0)
        ax.grid(alpha=0.3)
    if len(mine):
        throughput_ax.legend(title="path", fontsize="small")
    title = f"{trial_id}: {len(trial_stalls)} stall(s) shaded red"
    figure.suptitle(title)
    return figure


def cdf_figure(rows: pd.DataFrame, labels: pd.Series, metrics: list[str], scenario: str) -> Figure:
    """One panel per metric: the empirical CDF of the per-trial values of every cell
    (`labels`, aligned with `rows`), so a reader sees the spread behind each mean."""
    shown = [m for m in metrics if m in rows.columns]
    figure = Figure(figsize=(5 * max(1, len(shown)), 4), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, max(1, len(shown))))
    for ax, metric in zip(axes, shown, strict=False):
        values = pd.to_numeric(rows[metric], errors="coerce")
        for label in sorted(labels.unique()):
            sample = np.sort(values[labels == label].dropna().to_numpy(dtype=float))
            if len(sample):
                ax.ecdf(sample, label=f"{label} (n={len(sample)})")
        ax.set_xlabel(metric)
        ax.set_ylabel("fraction of trials")
        ax.grid(alpha=0.3)
    if len(shown):
        axes[0].legend(fontsize="x-small")
    figure.suptitle(f"{scenario}: per-trial values, empirical CDF per configuration")
    return figure
