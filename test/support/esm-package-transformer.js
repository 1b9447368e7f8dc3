// Compiles the ES modules of packages that ship no CommonJS build (jose) for jest's CommonJS runtime.
// Native class fields stay as they are (ts-jest would reuse the project's useDefineForClassFields: false).
const ts = require('typescript');
const { createHash } = require('node:crypto');

const compilerOptions = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, useDefineForClassFields: true, allowJs: true };

module.exports = {
  process(source, fileName) {
    const { outputText } = ts.transpileModule(source, { fileName, compilerOptions });
    return { code: outputText };
  },
  getCacheKey(source, fileName) {
    return createHash('sha256').update(`${ts.version}\0${fileName}\0${source}`).digest('hex');
  },
};
