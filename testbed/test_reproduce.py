"""`--reproduce`: bad seed names exit 2 before anything runs; pages carry every claim."""

from pathlib import Path

from testbed.reproduce import NOT_RUN, REPRODUCED, Claim, Page, reproduce


def test_unknown_seed_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    assert reproduce("seed9", tmp_path) == 2
    assert list(tmp_path.iterdir()) == []


def test_page_lists_each_claim_with_its_verdict_and_open_parameters() -> None:
    page = Page("seedX", "T", "setup text")
    page.claims = [
        Claim("claim a", "paper a", "ours a", REPRODUCED, "why a"),
        Claim("claim b", "paper b", "not run", NOT_RUN),
    ]
    page.open_params = [("buffer", "1 BDP", "not given")]
    text = page.markdown(12.3, "./run_trials.sh --reproduce seedX")
    assert "| claim a | paper a | ours a | **reproduced** |" in text
    assert "| claim b | paper b | not run | **not yet run** |" in text
    assert "| buffer | 1 BDP | not given |" in text
    assert "Wall time on this machine: 12 s." in text
    assert "* **claim a**: why a" in text
