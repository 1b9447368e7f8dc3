import type { DetectorKind } from './detectors';

/**
 * A labelled corpus per detector: at least 200 texts that contain one value
 * of the kind (positives) and 200 that contain none (negatives), built from a
 * fixed seed so every run scores the same texts.
 */
function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)];
  const chars = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[int(0, alphabet.length - 1)]).join('');
  return { next, int, pick, chars };
}

const HEX = '0123456789abcdef';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64URL = `${ALNUM}-_`;
const DIGITS = '0123456789';

const PROSE = [
  (v: string) => `Please contact ${v} about the refund.`,
  (v: string) => `{"customer":{"note":"reach out via ${v} today"}}`,
  (v: string) => `${v}`,
  (v: string) => `Result: found 3 records; primary: ${v}; secondary: none`,
  (v: string) => `log line 42 -> value=${v} status=ok`,
];

/** Values that look technical but are neither personal nor secret: no detector may fire on them. */
export function benignValues(count: number, seed = 7): string[] {
  const r = seeded(seed);
  const out: string[] = [];
  const makers = [
    () => `${r.chars(HEX, 8)}-${r.chars(HEX, 4)}-4${r.chars(HEX, 3)}-${r.pick(['8', '9', 'a', 'b'])}${r.chars(HEX, 3)}-${r.chars(HEX, 12)}`, // UUID
    () =>
      `2026-${String(r.int(1, 12)).padStart(2, '0')}-${String(r.int(1, 28)).padStart(2, '0')}T${String(r.int(0, 23)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}.${r.chars(DIGITS, 3)}Z`, // ISO timestamp
    () =>
      `2026-${String(r.int(1, 12)).padStart(2, '0')}-${String(r.int(1, 28)).padStart(2, '0')} ${String(r.int(0, 23)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}:00+02:00`,
    () => `ORD-${r.int(2019, 2026)}-${r.chars(DIGITS, 6)}`, // order numbers
    () => `order #${r.chars(DIGITS, 8)}`,
    () => `A-${r.chars(DIGITS, 4)}-${r.chars(DIGITS, 4)}`,
    () => `INV${r.chars(DIGITS, 10)}`,
    () => `v${r.int(0, 20)}.${r.int(0, 40)}.${r.int(0, 99)}`, // versions
    () => `${r.int(1, 9)}.${r.int(0, 30)}.${r.int(0, 30)}-beta.${r.int(1, 9)}`,
    () => r.chars(HEX, 40), // git sha
    () => r.chars(HEX, 64), // sha256
    () => `sha256:${r.chars(HEX, 64)}`,
    () => `${r.int(1, 999)},${r.chars(DIGITS, 3)}.${r.chars(DIGITS, 2)} EUR`,
    () => `${r.int(1000000000, 1999999999)}${r.chars(DIGITS, 3)}`, // epoch millis
    () => `build ${r.int(100, 999)}-${r.int(100, 999)}`,
    () => `${String(r.int(0, 23)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}`,
    () => `the password policy requires ${r.int(8, 16)} characters`,
    () => `token refreshed after ${r.int(1, 60)} minutes`,
    () => `See https://docs.example.com/guide/${r.chars(ALNUM, 8)}`,
    () => `std::vector<int> size ${r.int(1, 100)}`,
  ];
  for (let i = 0; i < count; i += 1) out.push(r.pick(PROSE)(makers[i % makers.length]()));
  return out;
}

function luhnComplete(partial: string): string {
  for (let d = 0; d <= 9; d += 1) {
    const candidate = partial + d;
    let sum = 0;
    let dbl = false;
    for (let i = candidate.length - 1; i >= 0; i -= 1) {
      let v = candidate.charCodeAt(i) - 48;
      if (dbl) v = v * 2 > 9 ? v * 2 - 9 : v * 2;
      sum += v;
      dbl = !dbl;
    }
    if (sum % 10 === 0) return candidate;
  }
  throw new Error('unreachable');
}

function ibanWithChecksum(country: string, bban: string): string {
  const numeric = (bban + country + '00').replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const digit of numeric) remainder = (remainder * 10 + Number(digit)) % 97;
  return `${country}${String(98 - remainder).padStart(2, '0')}${bban}`;
}

const spaced = (value: string, every = 4) => value.replace(new RegExp(`(.{${every}})(?=.)`, 'g'), '$1 ');

export interface Corpus {
  positives: string[];
  negatives: string[];
}

export function detectorCorpus(kind: DetectorKind, size = 220): Corpus {
  const r = seeded(kind.length * 7919 + kind.charCodeAt(0));
  const embed = (v: string) => r.pick(PROSE)(v);
  const positives: string[] = [];
  const negatives: string[] = benignValues(Math.floor(size / 2), kind.charCodeAt(1));
  const add = (list: string[], make: () => string) => {
    while (list.length < size) list.push(make());
  };

  switch (kind) {
    case 'email': {
      const domains = ['example.com', 'mail.example.co.uk', 'corp-example.de', 'example.io', 'uni.example.edu'];
      add(positives, () =>
        embed(
          `${r.chars('abcdefghijklmnopqrstuvwxyz', r.int(2, 8))}${r.pick(['.', '_', '+', ''])}${r.chars('abcdefghijklmnopqrstuvwxyz0123456789', r.int(1, 6))}@${r.pick(domains)}`,
        ),
      );
      add(negatives, () =>
        embed(
          r.pick([
            `user at example dot com`,
            `@${r.chars('abcdefgh', 6)}`,
            `${r.chars('abcdef', 4)}@localhost`,
            `npm i left-pad@${r.int(1, 9)}.${r.int(0, 9)}.${r.int(0, 9)}`,
            `git@${r.chars('abcdef', 3)}`,
            `price @ ${r.int(1, 99)} EUR`,
          ]),
        ),
      );
      break;
    }
    case 'phone': {
      add(positives, () =>
        embed(
          r.pick([
            () => `+1 ${r.int(201, 989)} ${r.int(200, 999)} ${r.chars(DIGITS, 4)}`,
            () => `+44 20 ${r.chars(DIGITS, 4)} ${r.chars(DIGITS, 4)}`,
            () => `+49 (30) ${r.chars(DIGITS, 4)} ${r.chars(DIGITS, 4)}`,
            () => `+33 1 ${r.chars(DIGITS, 2)} ${r.chars(DIGITS, 2)} ${r.chars(DIGITS, 2)} ${r.chars(DIGITS, 2)}`,
            () => `(${r.int(201, 989)}) ${r.int(200, 999)}-${r.chars(DIGITS, 4)}`,
            () => `${r.int(201, 989)}-${r.int(200, 999)}-${r.chars(DIGITS, 4)}`,
            () => `+4915${r.chars(DIGITS, 9)}`,
          ])(),
        ),
      );
      add(negatives, () =>
        embed(
          r.pick([
            `call extension ${r.int(100, 999)}`,
            `ORD-${r.chars(DIGITS, 3)}-${r.chars(DIGITS, 3)}-${r.chars(DIGITS, 4)}`,
            `qty ${r.int(1, 9999)}`,
            `${r.chars(DIGITS, 7)}`,
          ]),
        ),
      );
      break;
    }
    case 'payment_card': {
      const prefixes = ['4', '51', '52', '53', '54', '55', '2221', '37', '34', '6011', '65'];
      add(positives, () => {
        const prefix = r.pick(prefixes);
        const length = prefix === '37' || prefix === '34' ? 15 : 16;
        const number = luhnComplete(prefix + r.chars(DIGITS, length - prefix.length - 1));
        return embed(r.pick([number, spaced(number), spaced(number).replace(/ /g, '-')]));
      });
      add(negatives, () => {
        const prefix = r.pick(prefixes);
        const valid = luhnComplete(prefix + r.chars(DIGITS, 16 - prefix.length - 1));
        const broken = valid.slice(0, -1) + String((Number(valid.slice(-1)) + r.int(1, 9)) % 10);
        return embed(
          r.pick([
            broken,
            spaced(broken),
            `9${r.chars(DIGITS, 15)}`.replace(/.$/, (d) => d),
            `tracking 1Z${r.chars('ABCDEFGHJKLMNPRSTUVWXYZ0123456789', 16)}`,
          ]),
        );
      });
      break;
    }
    case 'iban': {
      const makers = [
        () => ibanWithChecksum('DE', r.chars(DIGITS, 18)),
        () => ibanWithChecksum('GB', `${r.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 4)}${r.chars(DIGITS, 14)}`),
        () => ibanWithChecksum('FR', r.chars(DIGITS, 23)),
        () => ibanWithChecksum('NL', `${r.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 4)}${r.chars(DIGITS, 10)}`),
      ];
      add(positives, () => {
        const iban = r.pick(makers)();
        return embed(r.next() < 0.5 ? iban : spaced(iban));
      });
      add(negatives, () => {
        const iban = r.pick(makers)();
        const wrong = iban.slice(0, 2) + String((Number(iban.slice(2, 4)) + r.int(1, 50)) % 100).padStart(2, '0') + iban.slice(4);
        return embed(r.pick([wrong, spaced(wrong), `SKU${r.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 14)}`]));
      });
      break;
    }
    case 'secret': {
      add(positives, () =>
        r.pick([
          () => embed(`sk-proj-${r.chars(B64URL, 40)}`),
          () => embed(`sk-ant-api03-${r.chars(B64URL, 60)}`),
          () => embed(`sk_live_${r.chars(ALNUM, 24)}`),
          () => embed(`AKIA${r.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`),
          () => embed(`ghp_${r.chars(ALNUM, 36)}`),
          () => embed(`xoxb-${r.chars(DIGITS, 11)}-${r.chars(ALNUM, 24)}`),
          () => embed(`AIza${r.chars(B64URL, 35)}`),
          () => `Authorization: Bearer ${r.chars(B64URL, 32)}`,
          () => `https://api.example.com/v1/items?api_key=${r.chars(ALNUM, 24)}&page=2`,
          () => `{"user":"bob","password":"${r.chars(ALNUM, 12)}!"}`,
          () => `db connection: postgres user=app password=${r.chars(ALNUM, 14)} host=db`,
          () => `{\\"client_secret\\": \\"${r.chars(ALNUM, 20)}\\"}`,
          () => `-----BEGIN RSA PRIVATE KEY-----\\n${r.chars(ALNUM, 64)}\\n${r.chars(ALNUM, 64)}\\n-----END RSA PRIVATE KEY-----`,
          () => `-----BEGIN PRIVATE KEY-----\n${r.chars(ALNUM, 64)}\n-----END PRIVATE KEY-----`,
        ])(),
      );
      add(negatives, () =>
        embed(
          r.pick([
            `sk-${r.chars(ALNUM, 6)}`,
            `Bearer token expired`,
            `the api key was rotated yesterday`,
            `password: (hidden)`,
            `-----BEGIN CERTIFICATE-----`,
            `ghp_short`,
            `AKIA is the prefix of access keys`,
          ]),
        ),
      );
      break;
    }
    case 'jwt': {
      const part = (n: number) => r.chars(B64URL, n);
      add(positives, () => embed(`eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ${part(r.int(20, 80))}.${part(43)}`));
      add(negatives, () =>
        embed(r.pick([`eyJhbGciOiJIUzI1NiJ9`, `header.payload.signature`, `${part(20)}.${part(20)}.${part(20)}`, `eyJ.eyJ.x`])),
      );
      break;
    }
    case 'ip': {
      add(positives, () =>
        embed(
          r.pick([
            () => `${r.int(1, 223)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)}`,
            () => Array.from({ length: 8 }, () => r.chars(HEX, r.int(1, 4))).join(':'),
            () => `2001:db8::${r.chars(HEX, 4)}`,
            () => `fe80::${r.chars(HEX, 3)}:${r.chars(HEX, 4)}`,
          ])(),
        ),
      );
      add(negatives, () =>
        embed(
          r.pick([
            `${r.int(256, 999)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(0, 255)}`,
            `v${r.int(1, 9)}.${r.int(0, 9)}.${r.int(0, 9)}`,
            `aa:bb:cc:dd:ee:ff`,
            `${r.int(10, 23)}:${r.int(10, 59)}:${r.int(10, 59)}`,
            `1.2.3`,
          ]),
        ),
      );
      break;
    }
  }
  return { positives, negatives };
}
