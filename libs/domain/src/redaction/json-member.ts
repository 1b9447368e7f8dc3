/**
 * Sets a member of a JSON object as an own property, whatever its name. A
 * plain assignment of "__proto__" would replace the object's prototype and
 * lose the member, which JSON allows like any other.
 */
export function setJsonMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
