/**
 * Aborts its signal once `touch` has not been called for `ms`. One timer,
 * re-armed only when it fires, so touching per event costs nothing.
 */
export class IdleWatchdog {
  private readonly controller = new AbortController();
  private lastTouch = Date.now();
  private timer: NodeJS.Timeout;

  constructor(private readonly ms: number) {
    this.timer = this.arm(ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    this.lastTouch = Date.now();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(delay: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const idle = Date.now() - this.lastTouch;
      if (idle >= this.ms) this.controller.abort();
      else this.timer = this.arm(this.ms - idle);
    }, delay);
    timer.unref();
    return timer;
  }
}
