import { parsePolicyDocument } from '../policy/tool-history-policy';
import { DEFAULT_DETECTORS, redactionRuleFor } from './redaction-policy';

describe('policy file: redaction rules', () => {
  it('reads persist, masks, detectors and maxResultChars; a tool key replaces the default key', () => {
    const parsed = parsePolicyDocument({
      defaults: { detectors: ['email', 'secret'], maskResult: ['$.ssn'] },
      tools: {
        charge_card: { persist: 'metadata' },
        lookup_patient: { maskResult: ['$.diagnosis', "$.visits[*]['doctor notes']"], maxResultChars: 500 },
        internal_probe: { persist: 'none', detectors: [] },
      },
    });
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    const { redaction } = parsed.policy;
    expect([...redaction.defaults.detectors]).toEqual(['email', 'secret']);

    const patient = redactionRuleFor(redaction, 'lookup_patient');
    expect(patient.maskResult.map((m) => m.path)).toEqual(['$.diagnosis', "$.visits[*]['doctor notes']"]);
    expect(patient.maxResultChars).toBe(500);
    expect(patient.persist).toBe('full');
    expect([...patient.detectors]).toEqual(['email', 'secret']);

    expect(redactionRuleFor(redaction, 'charge_card').persist).toBe('metadata');
    expect(redactionRuleFor(redaction, 'charge_card').maskResult.map((m) => m.path)).toEqual(['$.ssn']);
    expect(redactionRuleFor(redaction, 'internal_probe')).toMatchObject({ persist: 'none' });
    expect(redactionRuleFor(redaction, 'internal_probe').detectors.size).toBe(0);
    // Tool names come from producers: inherited object members are not rules.
    expect(redactionRuleFor(redaction, 'constructor')).toBe(redaction.defaults);
    expect(redactionRuleFor(redaction, null)).toBe(redaction.defaults);
  });

  it('runs every detector when no policy says otherwise', () => {
    const parsed = parsePolicyDocument({});
    expect(parsed.ok && parsed.policy.redaction.defaults.detectors).toEqual(DEFAULT_DETECTORS);
    expect(DEFAULT_DETECTORS.size).toBe(7);
  });

  it('names every bad path, detector, size and misplaced key in one list', () => {
    const parsed = parsePolicyDocument({
      defaults: { detectors: ['email', 'ssn'], maskArguments: '$.card' },
      channels: { web: { detectors: ['email'] } },
      tools: {
        pay: { maskArguments: ['$.card.number', 'card.cvc', '$..deep', 7], maxResultChars: 0, persist: 'partial' },
      },
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toEqual([
      'channels.web.detectors: unknown key (allowed here: freshnessSeconds, visibility, staleResults, maxHistoryTokens, abandonedAfterSeconds, reasoning, retention)',
      'tools.pay.persist: must be one of full, metadata, none',
      'defaults.maskArguments: must be a list of JSON paths such as "$.card.number"',
      'defaults.detectors[1]: unknown detector "ssn" (known: email, phone, payment_card, iban, secret, jwt, ip)',
      'tools.pay.maskArguments[1]: "card.cvc" must start with $',
      `tools.pay.maskArguments[2]: "$..deep": cannot read "..deep" (supported: .name, ['name'], [n], [*], .*)`,
      'tools.pay.maskArguments[3]: must be a JSON path string',
      'tools.pay.maxResultChars: must be a whole number of characters, 1 or more',
    ]);
  });
});
