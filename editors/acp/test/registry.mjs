// The ACP Registry entry: scripts/acp-manifest writes agent.json for a release from its
// SHA256SUMS; the entry must pass the registry's rules (test/registry-rules.json), name every
// platform the release builds, and its icon must be a 16×16 SVG in currentColor (the registry
// refuses hard-coded colours). Run by test/run.sh.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');
const dist = mkdtempSync(join(tmpdir(), 'reprise-registry-'));
const archives = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64', 'windows_arm64'].map((p) =>
  `reprise_1.4.0_${p}.${p.startsWith('windows') ? 'zip' : 'tar.gz'}`);
writeFileSync(join(dist, 'SHA256SUMS'), archives.map((a, i) => `${String(i).repeat(64)}  ${a}\n`).join(''));
execFileSync('bash', [join(repo, 'scripts', 'acp-manifest'), 'v1.4.0', dist], { stdio: 'inherit' });

const entry = JSON.parse(readFileSync(join(dist, 'acp-registry', 'reprise', 'agent.json'), 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(join(here, 'registry-rules.json'), 'utf8')));
const failures = [];
if (!validate(entry)) failures.push(`the registry's rules: ${ajv.errorsText(validate.errors)}`);
const binary = entry.distribution?.binary ?? {};
if (Object.keys(binary).length !== 6) failures.push(`${Object.keys(binary).length} platforms, want the release's 6`);
for (const [platform, t] of Object.entries(binary)) {
  const i = archives.findIndex((a) => t.archive.endsWith(`/${a}`));
  if (i < 0 || t.sha256 !== String(i).repeat(64)) failures.push(`${platform}: ${t.archive} with ${t.sha256}, not the release's archive and sum`);
  if (JSON.stringify(t.args) !== '["acp"]' || !t.cmd.startsWith('./reprise')) failures.push(`${platform}: runs ${t.cmd} ${t.args}`);
}
if (entry.version !== '1.4.0' || entry.id !== 'reprise') failures.push(`id ${entry.id}, version ${entry.version}`);
const icon = readFileSync(join(dist, 'acp-registry', 'reprise', 'icon.svg'), 'utf8');
if (!/width="16" height="16"/.test(icon) || /fill="(?!currentColor|none)[^"]*"|stroke="(?!currentColor|none)[^"]*"/.test(icon)) failures.push(`the icon is not a 16×16 SVG in currentColor: ${icon}`);
if (failures.length) {
  console.log(`FAIL the ACP Registry entry:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('ok   the ACP Registry entry of a release passes the registry\'s rules, names the 6 archives with their sums, and its icon is currentColor');
