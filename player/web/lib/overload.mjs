// Decode-overload detector: frames dropped while the buffer is healthy mean the machine could
// not decode in real time (CPU), not that the network was short. The network's signature is a
// stall (empty buffer); this one is the opposite. Fed with every 250 ms sample.

// A buffer of at least one second means data was there to decode.
export const HEALTHY_BUFFER_S = 1.0;

export class DecodeOverloadDetector {
  constructor(healthyBufferS = HEALTHY_BUFFER_S) {
    this.healthyBufferS = healthyBufferS;
    this.lastDropped = null;
    this.overloadDroppedTotal = 0;
  }

  /**
   * One sample: cumulative dropped frames, buffer level, whether a stall is in progress.
   * Returns {dropped_frames, buffer_s} (frames dropped since the previous sample) when the drops
   * happened with a healthy buffer and no stall, else null.
   */
  sample(droppedFramesTotal, bufferS, stalled) {
    const previous = this.lastDropped;
    this.lastDropped = droppedFramesTotal;
    if (previous === null || droppedFramesTotal <= previous) return null;
    if (stalled || !(bufferS >= this.healthyBufferS)) return null;
    const dropped = droppedFramesTotal - previous;
    this.overloadDroppedTotal += dropped;
    return { dropped_frames: dropped, buffer_s: bufferS };
  }
}
