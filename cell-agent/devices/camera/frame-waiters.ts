/**
 * Callers waiting for a camera's next frame: `wait(timeoutMs)` resolves when `wakeAll()` is called
 * (a frame arrived, or the source closed or failed) or when the timeout passes, whichever is first.
 * The caller then looks at the camera's state to tell which. Shared by the camera drivers (MJPEG over
 * HTTP, ffmpeg, ROS image topics).
 */
export class FrameWaiters {
  private readonly waiters = new Set<() => void>();

  /** Resolves at the next wakeAll() or after `timeoutMs`; never rejects. */
  wait(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }

  /** Wakes every caller waiting now. */
  wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
