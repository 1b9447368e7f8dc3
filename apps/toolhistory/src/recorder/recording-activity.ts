import { Injectable } from '@nestjs/common';

/** How long after its last batch recording still counts as under way: the gap between a partition's batches. */
const QUIET_AFTER_MS = 100;

/**
 * Whether the recorder is recording right now, so work that can wait (the
 * search projection) gives way to it on a machine whose cores both need.
 */
@Injectable()
export class RecordingActivity {
  private inFlight = 0;
  private lastEndedAt = 0;

  begin(): void {
    this.inFlight += 1;
  }

  end(): void {
    this.inFlight -= 1;
    this.lastEndedAt = Date.now();
  }

  busy(): boolean {
    return this.inFlight > 0 || Date.now() - this.lastEndedAt < QUIET_AFTER_MS;
  }
}
