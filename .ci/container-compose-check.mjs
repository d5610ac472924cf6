// Checks compose.yaml without a Compose engine (none is installed here): that it
// is YAML, names the services, profiles and commands the README promises, that
// every volume and dependency it names is declared, and that every HERALD_*
// variable it sets is one Herald's source reads (a misspelled one would be
// silently ignored). With the yaml package absent it says so and checks the text only.
// Usage: node .ci/container-compose-check.mjs compose.yaml
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const file = path.resolve(process.argv[2] ?? 'compose.yaml');
const text = fs.readFileSync(file, 'utf8');
const problems = [];

/** Every HERALD_* name that appears in src/: the variables Herald reads. */
function heraldVariables(dir = path.join(root, 'src'), found = new Set()) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) heraldVariables(full, found);
    else if (entry.name.endsWith('.ts')) for (const m of fs.readFileSync(full, 'utf8').matchAll(/HERALD_[A-Z0-9_]+/g)) found.add(m[0]);
  }
  return found;
}
const known = heraldVariables();
const HERALD_COMMANDS = new Set(['start', 'serve', 'worker', 'migrate']);
const SCALE = ['postgres', 'minio', 'minio-bucket', 'migrate', 'serve', 'worker'];

let YAML;
try {
  YAML = createRequire(path.join(root, 'package.json'))('yaml');
} catch {
  // Checked below from the text alone.
}

if (!YAML) {
  for (const name of ['herald', ...SCALE]) if (!new RegExp(`^  ${name}:`, 'm').test(text)) problems.push(`no service "${name}"`);
  for (const m of text.matchAll(/^\s+(HERALD_[A-Z0-9_]+):/gm)) if (!known.has(m[1])) problems.push(`${m[1]} is not a variable Herald reads`);
  console.log('compose.yaml: the yaml package is not installed, so only its text was checked (service names, variable names), not its structure');
} else {
  const doc = YAML.parseDocument(text, { merge: true });
  for (const e of [...doc.errors, ...doc.warnings]) problems.push(`YAML: ${e.message}`);
  const compose = doc.toJS({ maxAliasCount: 100 }) ?? {};
  const services = compose.services ?? {};
  const volumes = new Set(Object.keys(compose.volumes ?? {}));
  const profilesOf = (s) => services[s]?.profiles ?? [];

  if (!services.herald) problems.push('no service "herald" (the single Herald)');
  else if (profilesOf('herald').length) problems.push('"herald" must be in no profile: it is what "docker compose up" starts');
  for (const name of SCALE) {
    if (!services[name]) problems.push(`no service "${name}" in the scale profile`);
    else if (!profilesOf(name).includes('scale')) problems.push(`"${name}" is not in the profile "scale"`);
  }
  if (services.worker && services.worker.deploy?.replicas === undefined) problems.push('"worker" sets no deploy.replicas');

  for (const [name, service] of Object.entries(services)) {
    if (!service.image && !service.build) problems.push(`"${name}" has neither image nor build`);
    const isHerald = service.build !== undefined;
    if (isHerald) {
      const command = [service.command ?? 'start'].flat()[0];
      if (!HERALD_COMMANDS.has(command)) problems.push(`"${name}" runs "herald ${command}", not one of ${[...HERALD_COMMANDS].join(', ')}`);
      const dockerfile = service.build.dockerfile ?? 'Dockerfile';
      if (!fs.existsSync(path.resolve(path.dirname(file), service.build.context ?? '.', dockerfile)))
        problems.push(`"${name}" builds from ${dockerfile}, which does not exist`);
      for (const p of service.ports ?? []) if (!String(p).endsWith(':5000')) problems.push(`"${name}" publishes ${p}, not the image's port 5000`);
      if (!(service.volumes ?? []).some((v) => String(v).endsWith(':/data'))) problems.push(`"${name}" keeps its data folder (/data) on no volume`);
    }
    const env = Array.isArray(service.environment)
      ? Object.fromEntries(service.environment.map((e) => e.split(/=(.*)/s).slice(0, 2)))
      : (service.environment ?? {});
    for (const key of Object.keys(env)) if (key.startsWith('HERALD_') && !known.has(key)) problems.push(`"${name}" sets ${key}, which Herald does not read`);
    if (isHerald && profilesOf(name).includes('scale')) {
      if (!String(env.HERALD_DATABASE_URL ?? '').includes('@postgres:')) problems.push(`"${name}" does not use the postgres service's database`);
      if (env.HERALD_S3_ENDPOINT !== 'http://minio:9000' || !env.HERALD_S3_BUCKET) problems.push(`"${name}" does not keep media in the minio service's bucket`);
    }
    for (const v of service.volumes ?? []) {
      const source = String(v).split(':')[0];
      if (!source.startsWith('.') && !source.startsWith('/') && !volumes.has(source)) problems.push(`"${name}" mounts the undeclared volume "${source}"`);
    }
    const needs = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
    for (const other of needs) {
      if (!services[other]) problems.push(`"${name}" depends on the missing service "${other}"`);
      else if (profilesOf(other).length && !profilesOf(other).some((p) => profilesOf(name).includes(p)))
        problems.push(`"${name}" depends on "${other}", which is in none of its profiles`);
    }
  }
  // ${VAR}, ${VAR:-default}, ${VAR-default}; $$ is a literal dollar.
  for (const m of text.matchAll(/(?<!\$)\$\{([^}]*)\}/g))
    if (!/^[A-Za-z_][A-Za-z0-9_]*((:?[-?+]).*)?$/.test(m[1])) problems.push(`malformed interpolation \${${m[1]}}`);
}

for (const p of problems) console.log(`compose.yaml: ${p}`);
process.exit(problems.length ? 1 : 0);
