// The session summary (last line of player.jsonl, CONTRACTS.md §5.4) computed from the lines
// written before it, so that the summary can never disagree with the log it closes.

export function summarize(lines, reason) {
  let startupDelayMs = null;
  let stalls = 0;
  let stallTotalMs = 0;
  let stallMaxMs = 0;
  let dropped = 0;
  let total = 0;
  let playedS = 0;
  let switches = 0;
  let bitrateSum = 0;
  let bitrateSamples = 0;
  let decodeStalls = 0;
  let decodeStallTotalMs = 0;
  let decodeOverloadFrames = 0;
  for (const line of lines) {
    switch (line.event) {
      case "startup":
        startupDelayMs = line.startup_delay_ms;
        break;
      case "stall":
        stalls += 1;
        stallTotalMs += line.duration_ms;
        stallMaxMs = Math.max(stallMaxMs, line.duration_ms);
        break;
      case "decode_stall":
        decodeStalls += 1;
        decodeStallTotalMs += line.duration_ms;
        break;
      case "decode_overload":
        decodeOverloadFrames += line.dropped_frames;
        break;
      case "quality_switch":
        switches += 1;
        break;
      case "sample":
        dropped = line.dropped_frames;
        total = line.total_frames;
        playedS = Math.max(playedS, line.media_time_s);
        // Samples are evenly spaced (250 ms), so their plain mean is the time-weighted mean
        // of the bitrate on screen while playing.
        if (line.playing && line.bitrate_bps !== null) {
          bitrateSum += line.bitrate_bps;
          bitrateSamples += 1;
        }
        break;
      default:
        break;
    }
  }
  return {
    event: "summary",
    ended: reason === "ended",
    reason,
    startup_delay_ms: startupDelayMs,
    stalls,
    stall_total_ms: round3(stallTotalMs),
    stall_max_ms: round3(stallMaxMs),
    dropped_frames: dropped,
    total_frames: total,
    mean_bitrate_bps: bitrateSamples ? Math.round(bitrateSum / bitrateSamples) : null,
    quality_switches: switches,
    played_s: round3(playedS),
    // Additive (docs/PLAYER.md): the machine, not the network, held playback back.
    decode_stalls: decodeStalls,
    decode_stall_total_ms: round3(decodeStallTotalMs),
    decode_overload_frames: decodeOverloadFrames,
  };
}

function round3(x) {
  return Math.round(x * 1000) / 1000;
}
