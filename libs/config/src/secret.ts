const HIDDEN = '[secret]';

/**
 * A value that must never be written anywhere: logging, JSON or inspecting
 * it shows `[secret]`. Only `reveal()` gives it, at the one place that hands
 * it to a driver.
 */
export class Secret<T = string> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toString(): string {
    return HIDDEN;
  }

  toJSON(): string {
    return HIDDEN;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Secret(${HIDDEN})`;
  }
}
