import { isRefused } from './parsers';
import { type GivenSettings, type Setting, type SettingName, SETTINGS, type SettingValues } from './settings';

/**
 * The environment read through the table: what it means (`values`) and what
 * it says (`given`). The rules between variables take their values from
 * `values`, and ask `given` whether a variable is set, so a value refused by
 * its parser still counts as set and no rule contradicts its problem.
 */
export interface Settings {
  /** Typed: the parsed text; unset or refused, the default, else undefined. */
  readonly values: SettingValues;
  readonly given: GivenSettings;
}

/** One problem per variable its parser refuses, in the table's order. */
export function readSettings(env: Readonly<Record<string, string | undefined>>): Settings & { problems: string[] } {
  const values: Record<string, unknown> = {};
  const given: Partial<Record<SettingName, string>> = {};
  const problems: string[] = [];
  for (const setting of SETTINGS as readonly Setting[]) {
    const name = setting.name as SettingName;
    const text = env[name]?.trim();
    if (text !== undefined && text !== '') {
      given[name] = text;
      const parsed = setting.parse(text);
      if (!isRefused(parsed)) {
        values[name] = parsed.value;
        continue;
      }
      problems.push(`${name} ${parsed.problem}`);
    }
    values[name] = defaultValue(setting);
  }
  return { values: values as SettingValues, given, problems };
}

function defaultValue(setting: Setting): unknown {
  if (setting.default === undefined) return undefined;
  const parsed = setting.parse(setting.default);
  if (isRefused(parsed)) throw new Error(`the default of ${setting.name} is refused by its own parser: ${parsed.problem}`);
  return parsed.value;
}
