"""testbed/netem_backend.py on generated command lists (this kernel has no sch_netem)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testbed import netem_backend as nb
from testbed.scenario import load_resolved, resolve_file

REPO = Path(__file__).resolve().parent.parent


def _qdisc(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The qdisc kind and its parameters: everything from 'netem' or 'tbf' on."""
    kind = "netem" if "netem" in argv else "tbf"
    return argv[argv.index(kind) :]


def _resolve_text(tmp_path: Path, text: str) -> dict:
    file = tmp_path / "case.toml"
    file.write_text(text)
    return resolve_file(file, REPO, seed=0)


def test_control_sets_up_netem_and_tbf_on_each_egress_interface() -> None:
    netem_plan = nb.plan(load_resolved("control", REPO, seed=1))
    assert netem_plan.setup[2] == (
        *("tc", "qdisc", "replace", "dev", "c-wifi", "root", "handle", "1:"),
        *("netem", "limit", "100000", "delay", "20000us"),
    )
    # 67 packets (one BDP) x 1500 bytes; burst = two full frames at 20 Mbit/s
    assert netem_plan.setup[3] == (
        *("tc", "qdisc", "replace", "dev", "c-wifi", "parent", "1:1", "handle", "10:"),
        *("tbf", "rate", "20000000bit", "burst", "3028", "limit", "100500"),
    )
    devices = [argv[4] for argv in netem_plan.setup]
    assert devices == ["s-wifi", "s-wifi", "c-wifi", "c-wifi", "s-lte", "s-lte", "c-lte", "c-lte"]
    assert netem_plan.timeline == ()
    assert netem_plan.teardown == tuple(
        ("tc", "qdisc", "del", "dev", dev, "root") for dev in ("s-wifi", "c-wifi", "s-lte", "c-lte")
    )


def test_a1_ramps_become_steps_every_100_ms_on_the_wifi_downlink() -> None:
    netem_plan = nb.plan(load_resolved("A1", REPO, seed=1))
    timeline = netem_plan.timeline
    # 8 ramps of 5 s at 0.1 s steps; the last step falls at the scenario's end (180 s)
    assert len(timeline) == 8 * 50 - 1
    assert all(c.argv[4] == "c-wifi" and c.argv[2] == "change" for c in timeline)
    assert timeline[0].t_s == pytest.approx(30.1)
    assert timeline[0].argv[-3:] == ("loss", "random", "0.1%")
    assert timeline[49].t_s == 35.0 and timeline[49].argv[-1] == "5%"
    assert timeline[99].t_s == 45.0 and "loss" not in timeline[99].argv  # back to no loss
    times = [c.t_s for c in timeline]
    assert times == sorted(times)
    assert any("ramps are applied as steps" in d for d in netem_plan.differences)


def test_noise_steps_of_b1_become_one_change_per_second() -> None:
    resolved = load_resolved("B1", REPO, seed=4)
    timeline = nb.plan(resolved).timeline
    assert [c.t_s for c in timeline] == [float(t) for t in range(180)]
    first_p = resolved["paths"]["wifi"]["down"]["schedule"][0]["value"]
    assert timeline[0].argv[-1] == f"{first_p * 100:.7g}%"


def test_path_break_outage_is_full_loss_on_both_lte_interfaces() -> None:
    timeline = nb.plan(load_resolved("seed000-path-break", REPO, seed=1)).timeline
    assert [(c.t_s, c.argv[4], c.argv[-3:]) for c in timeline] == [
        (15.0, "s-lte", ("loss", "random", "100%")),
        (15.0, "c-lte", ("loss", "random", "100%")),
    ]  # the outage lasts to the end, so no command restores the link


def test_trace_driven_rate_is_refused_with_status_2() -> None:
    resolved = load_resolved("A1-lte-trace", REPO, seed=1)
    assert nb.unsupported(resolved)
    with pytest.raises(nb.NetemUnsupported) as info:
        nb.plan(resolved)
    assert info.value.exit_status == 2
    assert "paths.lte.down.rate" in str(info.value)


LINKS = """
duration_s = 60.0
[paths.wifi]
rate = { bps = 10_000_000 }
delay_ms = 10.0
jitter_ms = 2.0
loss = { model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3 }
[paths.lte]
rate = { bps = 100_000_000 }
delay_ms = 25.0
queue = { ms = 35.0 }
[paths.lte.up]
schedule = [
  { t_s = 10.0, op = "step", field = "rate_bps", value = 5e7 },
  { t_s = 10.0, op = "step", field = "delay_ms", value = 40.0 },
  { t_s = 20.0, op = "outage", until_s = 25.0 },
]
[paths.lte.down]
rate = { unlimited = true }
schedule = [{ t_s = 10.0, op = "step", field = "delay_ms", value = 40.0 }]
"""


def test_gilbert_elliott_jitter_rate_steps_and_queue_kinds(tmp_path: Path) -> None:
    netem_plan = nb.plan(_resolve_text(tmp_path, LINKS))
    wifi_up_netem = netem_plan.setup[0]
    assert _qdisc(wifi_up_netem) == (
        *("netem", "limit", "100000", "delay", "10000us", "2000us"),
        # tc's order: p, r, 1-h (loss in bad), 1-k (loss in good)
        *("loss", "gemodel", "1%", "30%", "100%", "0%"),
    )
    lte_up_tbf = netem_plan.setup[5]
    assert _qdisc(lte_up_tbf) == (
        "tbf",
        "rate",
        "100000000bit",
        "burst",
        "12500",
        "latency",
        "35000us",
    )
    # An unlimited link has netem only.
    assert [argv[4] for argv in netem_plan.setup].count("c-lte") == 1

    s_lte = [(c.t_s, _qdisc(c.argv)) for c in netem_plan.timeline if c.argv[4] == "s-lte"]
    assert s_lte == [
        (10.0, ("netem", "limit", "100000", "delay", "40000us")),
        (10.0, ("tbf", "rate", "50000000bit", "burst", "6250", "latency", "35000us")),
        (20.0, ("netem", "limit", "100000", "delay", "40000us", "loss", "random", "100%")),
        (25.0, ("netem", "limit", "100000", "delay", "40000us")),
    ]
    # The unlimited downlink has no tbf to change: only its netem changes.
    c_lte = [(c.t_s, _qdisc(c.argv)) for c in netem_plan.timeline if c.argv[4] == "c-lte"]
    assert c_lte == [(10.0, ("netem", "limit", "100000", "delay", "40000us"))]
    notes = " ".join(netem_plan.differences)
    assert "jitter reorders" in notes and "Gilbert-Elliott" in notes


class FakeClock:
    def __init__(self, start_ns: int) -> None:
        self.now = start_ns
        self.sleeps: list[float] = []

    def now_ns(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += int(seconds * 1e9) + 1_000  # each sleep overshoots by 1 us


def test_run_plan_waits_for_absolute_deadlines() -> None:
    netem_plan = nb.plan(load_resolved("seed000-path-break", REPO, seed=1))
    ran: list[tuple[int, list[str]]] = []
    clock = FakeClock(start_ns=5_000_000_000)
    t0_ns = clock.now

    lateness = nb.run_plan(
        netem_plan,
        lambda argv: ran.append((clock.now, list(argv))),
        t0_ns,
        now_ns=clock.now_ns,
        sleep_s=clock.sleep,
    )
    assert [argv for _, argv in ran[:8]] == [list(a) for a in netem_plan.setup]
    timed = ran[8:]
    assert len(timed) == 2
    for at_ns, _ in timed:
        assert 0 <= at_ns - (t0_ns + 15_000_000_000) < 1_000_000  # within 1 ms of 15 s
    assert len(lateness) == 2 and all(0 <= x < 0.001 for x in lateness)
    assert max(clock.sleeps) <= 0.1  # short sleeps, so stop() is seen quickly


def test_run_plan_stops_when_asked() -> None:
    netem_plan = nb.plan(load_resolved("seed000-path-break", REPO, seed=1))
    clock = FakeClock(start_ns=0)
    ran: list[list[str]] = []
    lateness = nb.run_plan(
        netem_plan,
        lambda argv: ran.append(list(argv)),
        0,
        now_ns=clock.now_ns,
        sleep_s=clock.sleep,
        stop=lambda: clock.now > 1_000_000_000,
    )
    assert lateness == []
    assert len(ran) == len(netem_plan.setup)  # setup ran, no timed command did


def test_kernel_has_netem_reads_the_module_lists(tmp_path: Path) -> None:
    import platform

    release = tmp_path / platform.release()
    release.mkdir()
    missing = tmp_path / "no-sys-module"
    (release / "modules.builtin").write_text("kernel/net/sched/sch_tbf.ko\n")
    assert not nb.kernel_has_netem(tmp_path, missing)
    (release / "modules.dep").write_text("kernel/net/sched/sch_netem.ko.xz:\n")
    assert nb.kernel_has_netem(tmp_path, missing)
