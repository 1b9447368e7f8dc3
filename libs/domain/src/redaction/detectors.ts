/**
 * Detectors of personal and secret data inside free text. Each finds
 * candidate spans with a pattern and confirms them with a check where one
 * exists (Luhn for cards, mod-97 for IBANs, octet ranges for IPs), so that
 * order numbers, UUIDs, timestamps, hashes and version strings stay intact.
 */
export const DETECTOR_KINDS = ['email', 'phone', 'payment_card', 'iban', 'secret', 'jwt', 'ip'] as const;
export type DetectorKind = (typeof DETECTOR_KINDS)[number];

export interface Detector {
  kind: DetectorKind;
  /** Candidate spans: a global pattern, or a scanner where no pattern can be linear. */
  pattern: RegExp | { spans(text: string): Iterable<[start: number, end: number]> };
  /** Confirms a candidate match; absent = every match counts. */
  confirm?: (match: string) => boolean;
  /** The pattern's first group is context that stays (the `Bearer ` or `password=` before a secret). */
  keepsPrefix?: boolean;
  /** A cheap test any text holding a match passes; a text failing it skips the pattern. */
  hint?: (text: string) => boolean;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes of the major card networks: Luhn alone passes one random number in ten. */
const CARD_PREFIX = /^(4|5[1-5]|2[2-7]|3[47]|6011|65|64[4-9]|35|30[0-5]|36|38|62)/;

export function paymentCardValid(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '');
  if (/^(\d)\1+$/.test(digits) || !CARD_PREFIX.test(digits)) return false;
  // Lengths per network: American Express 15, Visa 13/16/19, the others 16-19.
  const lengthFits = /^3[47]/.test(digits)
    ? digits.length === 15
    : digits.startsWith('4')
      ? [13, 16, 19].includes(digits.length)
      : digits.length >= 16 && digits.length <= 19;
  return lengthFits && luhnValid(digits);
}

export function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/ /g, '').toUpperCase();
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = ch >= 'A' && ch <= 'Z' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

function ipv4Valid(candidate: string): boolean {
  const parts = candidate.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255 && !(p.length > 1 && p.startsWith('0')));
}

function ipv6Valid(candidate: string): boolean {
  const halves = candidate.split('::');
  if (halves.length > 2) return false;
  const groups = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
  return halves.length === 2 ? groups.length <= 7 : groups.length === 8;
}

function phoneValid(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '');
  if (digits.length < 8 || digits.length > 15) return false;
  // Dates and times written with dashes or dots are not phone numbers.
  if (/^\d{4}[-./]\d{2}[-./]\d{2}/.test(candidate) || /^\d{2}[-./]\d{2}[-./]\d{4}/.test(candidate)) return false;
  return true;
}

const BEGIN_KEY = /-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY-----/g;
const END_KEY = /-----END (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY-----/g;

/**
 * Private key blocks: each BEGIN line to the first END line after it. A
 * pattern with a lazy body would scan to the end of the text from every
 * BEGIN that has no END after it (quadratic on repeated headers); the
 * markers are found once each here, and paired in one pass.
 */
export function* privateKeyBlocks(text: string): Generator<[number, number]> {
  const ends: Array<[number, number]> = [];
  END_KEY.lastIndex = 0;
  for (let m = END_KEY.exec(text); m !== null; m = END_KEY.exec(text)) ends.push([m.index, m.index + m[0].length]);
  if (ends.length === 0) return;
  let next = 0;
  BEGIN_KEY.lastIndex = 0;
  for (let m = BEGIN_KEY.exec(text); m !== null; m = BEGIN_KEY.exec(text)) {
    const begin = m.index;
    while (next < ends.length && ends[next][0] < begin + m[0].length) next += 1;
    if (next === ends.length) return;
    yield [begin, ends[next][1]];
    BEGIN_KEY.lastIndex = ends[next][1];
  }
}

const BASE64URL = /[A-Za-z0-9_-]/;
const isWordChar = (c: string | undefined) => c !== undefined && /\w/.test(c);

/**
 * JSON Web Tokens (eyJ<header>.eyJ<payload>.<signature>), found in linear
 * time. A pattern would try every "eyJ" inside a long run of base64url
 * characters and scan the run again from each (quadratic on "-eyJ-eyJ…").
 * Here each run between dots is read once: a token is three dot-separated
 * runs, the middle one starting with eyJ, the first holding an eyJ that
 * starts a word, and each long enough.
 */
export function* jsonWebTokens(text: string): Generator<[number, number]> {
  const runEnd = (from: number) => {
    let i = from;
    while (i < text.length && BASE64URL.test(text[i])) i += 1;
    return i;
  };
  let searchFrom = 0;
  for (let dot = text.indexOf('.eyJ', searchFrom); dot !== -1; dot = text.indexOf('.eyJ', searchFrom)) {
    // The payload run, and the dot that must end it.
    const payloadEnd = runEnd(dot + 1);
    searchFrom = Math.max(dot + 1, payloadEnd);
    if (payloadEnd - (dot + 1) < 8 || text[payloadEnd] !== '.') continue;
    const signatureEnd = runEnd(payloadEnd + 1);
    if (signatureEnd - (payloadEnd + 1) < 10) continue;
    // The header run before the dot: the leftmost eyJ in it that starts a word, with 5 or more after it.
    let headerStart = dot;
    while (headerStart > 0 && BASE64URL.test(text[headerStart - 1])) headerStart -= 1;
    let start = -1;
    for (let at = text.indexOf('eyJ', headerStart); at !== -1 && at + 8 <= dot; at = text.indexOf('eyJ', at + 1)) {
      if (!isWordChar(text[at - 1])) {
        start = at;
        break;
      }
    }
    if (start === -1) continue;
    yield [start, signatureEnd];
    searchFrom = signatureEnd;
  }
}

/** Order matters: earlier detectors claim their spans first (a JWT is not also a secret). */
export const DETECTORS: readonly Detector[] = [
  // Private key blocks, also with JSON-escaped line breaks.
  { kind: 'secret', pattern: { spans: privateKeyBlocks }, hint: (t) => t.includes('-----BEGIN') },
  { kind: 'jwt', pattern: { spans: jsonWebTokens }, hint: (t) => t.includes('eyJ') },
  {
    kind: 'secret',
    pattern: new RegExp(
      [
        String.raw`\bsk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{20,}`, // OpenAI, Anthropic
        String.raw`\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`, // Stripe
        String.raw`\bAKIA[0-9A-Z]{16}\b`, // AWS access key id
        String.raw`\bgh[pousr]_[A-Za-z0-9]{36,}\b`, // GitHub tokens
        String.raw`\bgithub_pat_[A-Za-z0-9_]{40,}`,
        String.raw`\bxox[abprs]-[A-Za-z0-9-]{10,}`, // Slack
        String.raw`\bAIza[0-9A-Za-z_-]{35}`, // Google API key
        String.raw`\bglpat-[A-Za-z0-9_-]{20,}`, // GitLab
        String.raw`\bnpm_[A-Za-z0-9]{36}\b`,
      ].join('|'),
      'gi',
    ),
    hint: (t) => /sk-|_live_|_test_|AKIA|gh[pousr]_|github_pat_|xox|AIza|glpat-|npm_/i.test(t),
  },
  // Bearer tokens: the scheme word stays, the token goes.
  { kind: 'secret', pattern: /(\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*/gi, keepsPrefix: true, hint: (t) => /bearer/i.test(t) },
  {
    kind: 'secret',
    // password=..., "api_key": "...", token: ... (the key name stays, the value goes)
    pattern:
      /(\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\\?"?\s*[:=]\s*\\?"?)[^\s"'\\,;&}()<>*]{4,}/gi,
    keepsPrefix: true,
    hint: (t) => /[:=]/.test(t),
  },
  // Bounded as RFC 5321 bounds addresses (64 before the @, labels of 63): no start can scan far.
  {
    kind: 'email',
    pattern: /\b[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b/g,
    hint: (t) => t.includes('@'),
  },
  {
    kind: 'iban',
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g,
    confirm: ibanValid,
    hint: (t) => /[A-Z]{2}\d\d/.test(t),
  },
  // Digits inside hex strings, ids or longer numbers are not cards.
  { kind: 'payment_card', pattern: /(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])/g, confirm: paymentCardValid, hint: (t) => /\d/.test(t) },
  { kind: 'ip', pattern: /(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])/g, confirm: ipv4Valid, hint: (t) => /\d\.\d/.test(t) },
  {
    kind: 'ip',
    pattern:
      /(?<![:\w])(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}(?![:\w])|(?<![:\w])(?:[0-9a-fA-F]{1,4}:){1,6}(?::[0-9a-fA-F]{1,4}){1,6}(?![:\w])/g,
    confirm: ipv6Valid,
    // Either "::" or seven colons: times of day ("09:26:53") do not wake the costly pattern.
    hint: (t) => t.includes('::') || t.split(':').length > 7,
  },
  {
    kind: 'phone',
    // International (+..) or written with the separators people use; bare digit runs are ambiguous.
    pattern:
      /(?<![\w+-])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{2,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}|\d{3}[ .-]\d{3}[ .-]\d{4})(?![\w-])/g,
    confirm: phoneValid,
    hint: (t) => /\d\d/.test(t),
  },
];
