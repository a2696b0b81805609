"""metrics/drops.py: every dropped frame attributed, with evidence, from hand-made lines."""

from __future__ import annotations

from metrics import drops

S = 1_000_000_000


def sample(t_s: float, dropped: int, buffer_s: float = 8.0) -> dict:
    return {"event": "sample", "t_ns": int(t_s * S), "dropped_frames": dropped,
            "total_frames": int(t_s * 30), "buffer_s": buffer_s, "playing": True}  # fmt: skip


def cpu(t_s: float, busy: float, wait_ms: float = 5.0, interval_s: float = 0.25) -> dict:
    return {"event": "cpu_sample", "t_ns": int(t_s * S), "interval_s": interval_s,
            "player_set_busy": busy, "player_runq_wait_ms": wait_ms,
            "loadavg": [7.5, 5.0, 3.0]}  # fmt: skip


def session() -> tuple[list[dict], list[dict]]:
    counters = {2.0: 3, 5.0: 4, 7.0: 6, 9.5: 7, 11.25: 9, 13.0: 11}
    player: list[dict] = []
    dropped = 0
    buffer = {7.0: 0.3}
    for step in range(1, 57):  # samples every 250 ms, 0.25 .. 14.0 s
        t = step * 0.25
        dropped = counters.get(t, dropped)
        player.append(sample(t, dropped, buffer.get(t, 8.0)))
    player.append({"event": "quality_switch", "t_ns": int(9.1 * S), "media_time_s": 8.0})
    player.append({"event": "qos", "t_ns": int(11.1 * S), "element": "/playbin/sink",
                   "reason": "late-at-sink", "jitter_ns": 45_000_000})  # fmt: skip
    player.sort(key=lambda line: line["t_ns"])
    cpus = [cpu(step * 0.25, 0.55) for step in range(1, 57)]
    cpus[7] = cpu(2.0, 0.99)  # the interval (1.75, 2.0]: saturated
    cpus[51] = cpu(13.0, 0.98, wait_ms=40.0)  # saturated; 40 ms in 0.25 s = 160 ms/s waited
    cpus[19] = cpu(5.0, 0.9, wait_ms=100.0)  # 400 ms/s of run-queue wait, but idle time left
    return player, cpus


def test_every_episode_gets_its_cause() -> None:
    player, cpus = session()
    episodes = drops.attribute_drops(player, cpus)
    assert [(e.t_s, e.frames, e.cause) for e in episodes] == [
        (2.0, 3, "cpu"),  # CPU set 99 % busy in that interval
        (5.0, 1, "other"),  # healthy buffer, 90 % busy is no saturation; no switch, no QoS
        (7.0, 2, "stall"),  # 0.3 s buffered
        (9.5, 1, "switch"),  # rendition changed at 9.1 s
        (11.25, 2, "qos"),  # GStreamer QoS drop at 11.1 s
        (13.0, 2, "cpu"),  # saturated again
    ]
    assert "99% busy" in episodes[0].evidence and "load 7.5" in episodes[0].evidence
    assert "160 ms/s" in episodes[5].evidence


def test_counts_split_into_decoder_and_network() -> None:
    counts = drops.drop_counts(drops.attribute_drops(*session()))
    assert counts["dropped_frames_decoder"] == 3 + 2 + 2
    assert counts["dropped_frames_network"] == 1 + 2 + 1
    assert counts["dropped_frames_cpu"] == 5 and counts["dropped_frames_qos"] == 2
    assert counts["dropped_frames_other"] == 1 and counts["dropped_frames_switch"] == 1
    assert counts["dropped_frames_stall"] == 2
    # every dropped frame is attributed: the two sides add up to the final counter
    player, _ = session()
    final = max(line["dropped_frames"] for line in player if line["event"] == "sample")
    assert counts["dropped_frames_decoder"] + counts["dropped_frames_network"] == final == 11


def test_without_cpu_log_no_drop_is_decoder_side() -> None:
    player, _ = session()
    player = [line for line in player if line["event"] != "qos"]
    assert not any(e.decoder_side for e in drops.attribute_drops(player, []))


def test_reason_names_the_cpu_evidence_above_tolerance() -> None:
    episodes = drops.attribute_drops(*session())
    reason = drops.decoder_side_reason(episodes, 420, tolerance=0.0)
    assert reason is not None
    assert "decoder-side drops: 7 frames in 3 episode(s)" in reason
    assert "player CPUs 99% busy" in reason
    network_only = [e for e in episodes if not e.decoder_side]
    assert drops.decoder_side_reason(network_only, 420, tolerance=0.0) is None
    # 7 of 420 frames = 1.67 %: within a 2 % tolerance, over a 1 % one
    assert drops.decoder_side_reason(episodes, 420, tolerance=0.02) is None
    reason = drops.decoder_side_reason(episodes, 420, tolerance=0.01)
    assert reason is not None and "(tolerance 1.00% of 420 frames = 4)" in reason


def test_window_reaches_back_to_the_previous_sample_and_margin() -> None:
    # a drop seen at 3.0 s (previous sample 2.75 s): a saturated interval ending at 2.5 s is
    # within the 0.5 s margin; one ending at 2.0 s is not
    player = [sample(2.75, 0), sample(3.0, 4)]
    assert drops.attribute_drops(player, [cpu(2.5, 0.99)])[0].cause == "cpu"
    assert drops.attribute_drops(player, [cpu(2.0, 0.99)])[0].cause == "other"


def test_control_distribution_by_hand() -> None:
    rows = [
        {
            "scenario": "control",
            "status": "ok",
            "player": "dashjs",
            "stalls": 0,
            "dropped_frames_decoder": d,
            "dropped_frames_network": 0,
            "loadavg_1m_max": 1.0 + d,
            "total_frames": 1800,
        }  # fmt: skip
        for d in [0] * 17 + [2, 5, 9]
    ]
    rows.append(
        {"scenario": "B1", "status": "ok", "player": "dashjs", "dropped_frames_decoder": 99}
    )
    out = drops.control_distribution(rows)
    assert out["sessions"] == 20
    assert out["decoder_side_drops_p95"] == 5  # 19th of 20 sorted values
    assert out["decoder_side_drops_max"] == 9 and out["decoder_side_drops_median"] == 0
    assert out["loadavg_1m_max_range"] == [1.0, 10.0] and out["total_frames"] == 36000
    assert out["decoder_side_fraction_p95"] == round(5 / 1800, 5)
