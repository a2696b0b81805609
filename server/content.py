"""DASH content preparation with FFmpeg: an H.264 ABR ladder in fragmented MP4, cached.

`python -m server.content --duration-s 60 [--input video.mp4]` prints the content folder,
`cache/content/<hash>/`, which holds `manifest.mpd`, the init and media segments and
`ladder.json` (the rungs with their target and measured bitrates).

The folder name is a hash of everything that decides the bytes: the parameters below, the
FFmpeg version and, for a user's video, the input file's content. It is made once: built in a
temporary folder beside it and renamed into place, under a lock so that concurrent trials
wait for one encoder instead of running two.

Default source: a deterministic synthetic video, FFmpeg's `testsrc2` (moving colour pattern,
scrolling text, a frame counter) under seeded temporal noise. The noise keeps every frame
expensive to code, so that each rung really costs its bitrate (the top rung measured 5.31
Mbit/s for 5.24, docs/PLAYER.md): the network must carry what seed 002's video costs.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = REPO / "cache" / "content"
MANIFEST = "manifest.mpd"
LADDER_FILE = "ladder.json"

FPS = 30
SEGMENT_S = 2
# One closed GOP per segment, so that every segment starts with an IDR frame and the
# player can switch rendition at any segment boundary.
GOP_FRAMES = FPS * SEGMENT_S
X264_PRESET = "veryfast"
# One x264 thread per rung: with frame threads x264's rate control (ABR with a VBV buffer, as
# here) plans each frame from the predicted sizes of frames still being encoded, so two
# encodes of the same clip differed in every segment (by up to 0.5 %), and with them every
# simulated result that reads the segment sizes. One thread makes the bytes a function of
# the parameters below; an encode takes about 1.7 x as long.
X264_THREADS = 1
# Temporal noise strength for the synthetic source (0-100). With 12 every rung meets its
# target bitrate with x264 veryfast (ladder.json, docs/PLAYER.md) and the picture stays
# readable for manual playback.
SYNTHETIC_NOISE = 12
SYNTHETIC_NOISE_SEED = 20241121


@dataclass(frozen=True)
class Rung:
    """One representation of the ladder."""

    width: int
    height: int
    bitrate_bps: int


# Seed 002 streams a 5.24 Mbit/s H.264 video; the lower rungs roughly halve the rate at each
# step so that an ABR algorithm has a rung below every path capacity the scenarios use. Every
# rung has its own resolution: the players identify what is on screen by the decoded frame size.
# The top rung is 720p, not 1080p: decoding 1080p at 5.24 Mbit/s cost dash.js in headless
# Chromium 40-60 % more CPU than 720p at the same bitrate on this 2-core shared machine, and
# GStreamer 25-45 % more (docs/PLAYER.md, "CPU cost"); a control trial must decode without
# dropping frames. LADDER_1080P keeps the 1080p variant for machines with CPU to spare.
DEFAULT_LADDER: tuple[Rung, ...] = (
    Rung(1280, 720, 5_240_000),
    Rung(960, 540, 3_000_000),
    Rung(768, 432, 1_500_000),
    Rung(640, 360, 800_000),
)
LADDER_1080P: tuple[Rung, ...] = (
    Rung(1920, 1080, 5_240_000),
    Rung(1280, 720, 3_000_000),
    Rung(960, 540, 1_500_000),
    Rung(640, 360, 800_000),
)
# Seed 002's own content: one rendition at its 5.24 Mbit/s (its Table I lists no other rate), so
# that an ABR algorithm cannot hide a shortage of throughput by switching down: the default
# ladder's top rung alone.
LADDER_TOP_ONLY: tuple[Rung, ...] = DEFAULT_LADDER[:1]
LADDERS = {"720p": DEFAULT_LADDER, "1080p": LADDER_1080P, "720p-top-only": LADDER_TOP_ONLY}


class ContentError(Exception):
    """Bad input (exit status 2): the message names the value and what is valid."""


def ffmpeg_version() -> str:
    out = subprocess.run(["ffmpeg", "-hide_banner", "-version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_params(
    duration_s: int, input_file: Path | None, ladder: tuple[Rung, ...] = DEFAULT_LADDER
) -> dict:
    """Everything that decides the output bytes (hashed into the cache folder name)."""
    return {
        "schema": 1,
        "duration_s": duration_s,
        "fps": FPS,
        "segment_s": SEGMENT_S,
        "gop_frames": GOP_FRAMES,
        "codec": "h264",
        "x264_preset": X264_PRESET,
        "x264_threads": X264_THREADS,
        "b_frames": 0,
        "source": (
            {"kind": "file", "name": input_file.name, "sha256": _file_sha256(input_file)}
            if input_file
            else {
                "kind": "synthetic",
                "pattern": "testsrc2",
                "noise": SYNTHETIC_NOISE,
                "noise_seed": SYNTHETIC_NOISE_SEED,
            }
        ),
        "ladder": [asdict(r) for r in ladder],
        "ffmpeg": ffmpeg_version(),
    }


def content_hash(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]


def ffmpeg_argv(
    duration_s: int, input_file: Path | None, ladder: tuple[Rung, ...], out_dir: Path
) -> list[str]:
    """The FFmpeg command line: one decode, `split` into one scaler + x264 per rung, dash muxer."""
    argv = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y"]
    top = ladder[0]
    if input_file is None:
        argv += [
            "-f",
            "lavfi",
            "-i",
            f"testsrc2=size={top.width}x{top.height}:rate={FPS}:duration={duration_s}",
        ]
        source = f"[0:v]noise=alls={SYNTHETIC_NOISE}:allf=t:all_seed={SYNTHETIC_NOISE_SEED}"
    else:
        # Loop a short input so that any duration can be asked for.
        argv += ["-stream_loop", "-1", "-i", str(input_file)]
        source = f"[0:v]fps={FPS}"
    labels = [f"[s{i}]" for i in range(len(ladder))]
    graph = [f"{source},split={len(ladder)}{''.join(labels)}"]
    for i, rung in enumerate(ladder):
        # Keep the aspect ratio of a user's video inside the rung's box, then pad to it.
        graph.append(
            f"[s{i}]scale={rung.width}:{rung.height}:force_original_aspect_ratio=decrease,"
            f"pad={rung.width}:{rung.height}:(ow-iw)/2:(oh-ih)/2,setsar=1,format=yuv420p[v{i}]"
        )
    argv += ["-filter_complex", ";".join(graph), "-t", str(duration_s)]
    for i, rung in enumerate(ladder):
        kbps = rung.bitrate_bps // 1000
        argv += [
            "-map",
            f"[v{i}]",
            f"-c:v:{i}",
            "libx264",
            f"-b:v:{i}",
            f"{kbps}k",
            f"-maxrate:v:{i}",
            f"{kbps}k",
            # One segment's worth of VBV buffer: segment sizes stay near bitrate x 2 s.
            f"-bufsize:v:{i}",
            f"{kbps * SEGMENT_S}k",
        ]
    argv += [
        "-preset",
        X264_PRESET,
        "-profile:v",
        "high",
        "-r",
        str(FPS),
        "-g",
        str(GOP_FRAMES),
        "-keyint_min",
        str(GOP_FRAMES),
        "-sc_threshold",
        "0",
        # No B-frames: with them the fMP4 timeline starts at the composition offset (2 frames),
        # the buffered media ends 0.067 s before the MPD duration, and dash.js 5.2.1's gap
        # jumper loops at the end of the stream instead of ending (seen on this machine).
        "-bf",
        "0",
        # x264 GOPs are closed unless open-gop is asked for; force the IDR at every boundary.
        "-force_key_frames",
        f"expr:gte(t,n_forced*{SEGMENT_S})",
        "-an",
        "-f",
        "dash",
        "-seg_duration",
        str(SEGMENT_S),
        "-use_template",
        "1",
        "-use_timeline",
        "0",
        "-init_seg_name",
        "init-$RepresentationID$.m4s",
        "-media_seg_name",
        "chunk-$RepresentationID$-$Number%05d$.m4s",
        "-adaptation_sets",
        "id=0,streams=v",
        "-threads",
        str(X264_THREADS),
        str(out_dir / MANIFEST),
    ]
    return argv


def measure_rungs(out_dir: Path, ladder: tuple[Rung, ...], duration_s: int) -> list[dict]:
    """Measured mean and largest-segment bitrate per representation (from the segment files)."""
    rungs = []
    for rep_id, rung in enumerate(ladder):
        segments = sorted(out_dir.glob(f"chunk-{rep_id}-*.m4s"))
        sizes = [p.stat().st_size for p in segments]
        rungs.append(
            {
                "rep_id": str(rep_id),
                "width": rung.width,
                "height": rung.height,
                "bitrate_bps": rung.bitrate_bps,
                "measured_mean_bps": round(sum(sizes) * 8 / duration_s) if sizes else 0,
                "measured_max_segment_bps": round(max(sizes) * 8 / SEGMENT_S) if sizes else 0,
                "segments": len(sizes),
            }
        )
    return rungs


def _build(
    duration_s: int, input_file: Path | None, ladder: tuple[Rung, ...], params: dict, dest: Path
) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{dest.name}-", dir=dest.parent))
    try:
        argv = ffmpeg_argv(duration_s, input_file, ladder, tmp)
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(
                f"ffmpeg failed (status {proc.returncode}) preparing {dest.name}:\n"
                f"{proc.stderr[-3000:]}\ncommand: {' '.join(argv)}"
            )
        mpd = (tmp / MANIFEST).read_text()
        ladder_doc = {
            "schema": 1,
            "hash": dest.name,
            "manifest": MANIFEST,
            "params": params,
            "rungs": measure_rungs(tmp, ladder, duration_s),
            "mpd_duration": re.search(r'mediaPresentationDuration="([^"]+)"', mpd).group(1),
        }
        (tmp / LADDER_FILE).write_text(json.dumps(ladder_doc, indent=2) + "\n")
        os.rename(tmp, dest)  # atomic: the folder exists complete or not at all
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def is_prepared(
    duration_s: int, *, cache: Path = DEFAULT_CACHE, ladder: tuple[Rung, ...] = DEFAULT_LADDER
) -> bool:
    """Whether `prepare(duration_s)` (no input file) would find the content in the cache."""
    dest = Path(cache) / content_hash(content_params(duration_s, None, ladder))
    return (dest / LADDER_FILE).is_file()


def encode_minutes_estimate(duration_s: int) -> str:
    """A rough range for encoding `duration_s` of the default ladder on this project's 2-core
    machines: the 60 s ladder took about 1 min on an idle machine and 4-6 min under load."""
    low = max(1, round(duration_s / 60))
    return f"{low}-{max(2, round(duration_s * 6 / 60))}"


def prepare(
    duration_s: int,
    input_file: Path | None = None,
    *,
    cache: Path = DEFAULT_CACHE,
    ladder: tuple[Rung, ...] = DEFAULT_LADDER,
) -> Path:
    """Folder with manifest.mpd + ladder.json for this duration and source (made once)."""
    if not isinstance(duration_s, int) or isinstance(duration_s, bool) or duration_s < SEGMENT_S:
        raise ContentError(
            f"duration_s={duration_s!r}: must be an integer number of seconds >= {SEGMENT_S}"
        )
    if input_file is not None:
        input_file = Path(input_file)
        if not input_file.is_file():
            raise ContentError(f"--input {input_file}: no such file (give a video FFmpeg reads)")
    if shutil.which("ffmpeg") is None:
        raise RuntimeError("ffmpeg not found on PATH (installed by scripts/setup.sh)")
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    params = content_params(duration_s, input_file, ladder)
    dest = cache / content_hash(params)
    if (dest / LADDER_FILE).is_file():
        return dest
    with open(cache / f".{dest.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another trial may be encoding the same content
        if not (dest / LADDER_FILE).is_file():
            _build(duration_s, input_file, ladder, params, dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.content",
        description="Prepare DASH content (H.264 ladder, 2 s segments) and print its folder.",
    )
    parser.add_argument(
        "--duration-s", type=int, default=180, help="video duration in seconds (default 180)"
    )
    parser.add_argument(
        "--input", type=Path, default=None, help="your own video (default: synthetic testsrc2)"
    )
    parser.add_argument(
        "--ladder",
        choices=sorted(LADDERS),
        default="720p",
        help="top rung resolution (default 720p; 1080p costs more CPU to decode); "
        "720p-top-only: the 5.24 Mbit/s 720p rung alone (seed 002's single rendition)",
    )
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help=f"cache folder (default {DEFAULT_CACHE})"
    )
    args = parser.parse_args(argv)
    try:
        folder = prepare(args.duration_s, args.input, cache=args.cache, ladder=LADDERS[args.ladder])
    except ContentError as e:
        print(f"server.content: {e}", file=sys.stderr)
        return 2
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
