/**
 * A real WordPress for the tests: Debian's `wordpress` package served by PHP's
 * built-in server on a fresh MariaDB database. The site is installed from
 * scratch (wp_install), with an Author and a Contributor who each get an
 * application password, a category and a tag; the database and the files are
 * removed on close.
 *
 * Debian's wp-config.php reads /etc/wordpress/config-<WORDPRESS_CONFIG>.php, so
 * each site writes one config file there, named for the run, and removes it.
 * WP_ENVIRONMENT_TYPE 'local' lets application passwords work over plain HTTP.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/herald.ts';

export const WORDPRESS_DIR = '/usr/share/wordpress';
const CONFIG_DIR = '/etc/wordpress';
const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

export interface WordPressUser {
  id: number;
  login: string;
  name: string;
  /** The application password, as WordPress shows it once (groups of four). */
  appPassword: string;
  /** The application password's uuid, to revoke it. */
  appPasswordUuid: string;
}

export interface WordPressSite {
  url: string;
  author: WordPressUser;
  contributor: WordPressUser;
  category: { id: number; name: string };
  tag: { id: number; name: string };
  /** Runs PHP with WordPress loaded (as the CLI sees it) and returns what it prints. */
  php(code: string): string;
  close(): Promise<void>;
}

/** Why a real WordPress cannot run here, or undefined when it can. */
export function wordpressMissing(): string | undefined {
  if (spawnSync('php', ['-v']).status !== 0) return 'php (php-cli) is not installed';
  if (!fs.existsSync(path.join(WORDPRESS_DIR, 'wp-load.php'))) return `Debian's wordpress package is not installed (${WORDPRESS_DIR})`;
  const mysqli = spawnSync('php', ['-r', 'exit(extension_loaded("mysqli") ? 0 : 1);']);
  if (mysqli.status !== 0) return 'php-mysql (mysqli) is not installed';
  const db = spawnSync('php', ['-r', `$m = @new mysqli(${phpString(MARIADB.host)}, 'root', '', null, ${MARIADB.port}); exit($m->connect_errno ? 1 : 0);`]);
  if (db.status !== 0) return `MariaDB is not reachable at ${MARIADB.host}:${MARIADB.port} as root without a password`;
  try {
    fs.accessSync(CONFIG_DIR, fs.constants.W_OK);
  } catch {
    return `${CONFIG_DIR} is not writable (Debian's WordPress reads its per-site config from there)`;
  }
  return undefined;
}

function phpString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function runPhp(file: string, env: Record<string, string>): string {
  const result = spawnSync('php', [file], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`php ${path.basename(file)} failed (${result.status}): ${result.stderr || result.stdout}`);
  return result.stdout;
}

function mariadb(statement: string): void {
  const code =
    `$m = new mysqli(${phpString(MARIADB.host)}, 'root', '', null, ${MARIADB.port}); ` +
    `if (!$m->query(${phpString(statement)})) { fwrite(STDERR, $m->error); exit(1); }`;
  const result = spawnSync('php', ['-r', code], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`MariaDB refused "${statement}": ${result.stderr}`);
}

/** Serves WordPress under php -S: files as they are, uploads from the site's folder, anything else through index.php (pretty permalinks). */
function router(contentDir: string): string {
  return `<?php
$_SERVER['WORDPRESS_CONFIG'] = getenv('WORDPRESS_CONFIG');
$path = urldecode(parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH));
if (str_contains($path, '..')) { http_response_code(400); return true; }
if (str_starts_with($path, '/wp-content/uploads/')) {
  $file = ${phpString(contentDir)} . substr($path, strlen('/wp-content'));
  if (!is_file($file)) { http_response_code(404); return true; }
  header('Content-Type: ' . mime_content_type($file));
  readfile($file);
  return true;
}
$file = ${phpString(WORDPRESS_DIR)} . $path;
if ($path !== '/' && is_file($file)) return false;
if (is_dir($file) && is_file($file . '/index.php')) return false;
chdir(${phpString(WORDPRESS_DIR)});
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = ${phpString(WORDPRESS_DIR)} . '/index.php';
$_SERVER['PHP_SELF'] = '/index.php';
require ${phpString(WORDPRESS_DIR)} . '/index.php';
return true;
`;
}

/** Loads WordPress in php-cli for the site (no mail leaves: wp_mail is replaced before WordPress defines it). */
function loader(host: string): string {
  return `<?php
$_SERVER['HTTP_HOST'] = ${phpString(host)};
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_NAME'] = '127.0.0.1';
$_SERVER['SERVER_PORT'] = ${phpString(host.split(':')[1])};
$_SERVER['WORDPRESS_CONFIG'] = getenv('WORDPRESS_CONFIG');
function wp_mail() { return true; }
`;
}

const INSTALL =
  `
define('WP_INSTALLING', true);
require ${phpString(WORDPRESS_DIR)} . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
wp_install('Herald Test Site', 'admin', 'admin@example.test', false, '', wp_generate_password(24));
global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%postname%/');
flush_rewrite_rules(false);
function herald_user($login, $name, $role) {
  $id = wp_insert_user(['user_login' => $login, 'user_pass' => wp_generate_password(24), ` +
  `'user_email' => $login . '@example.test', 'display_name' => $name, 'role' => $role]);
  if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message()); exit(1); }
  [$password, $item] = WP_Application_Passwords::create_new_application_password($id, ['name' => 'herald']);
  return ['id' => $id, 'login' => $login, 'name' => $name, ` +
  `'appPassword' => WP_Application_Passwords::chunk_password($password), 'appPasswordUuid' => $item['uuid']];
}
$category = wp_insert_term('Releases', 'category');
$tag = wp_insert_term('herald', 'post_tag');
echo json_encode([
  'author' => herald_user('ada', 'Ada Author', 'author'),
  'contributor' => herald_user('carl', 'Carl Contributor', 'contributor'),
  'category' => ['id' => $category['term_id'], 'name' => 'Releases'],
  'tag' => ['id' => $tag['term_id'], 'name' => 'herald'],
]);
`;

async function waitForHttp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`php -S stopped (${child.exitCode}): ${output()}`);
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.status < 500) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`WordPress did not answer at ${url}: ${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startWordPressSite(): Promise<WordPressSite> {
  const run = `herald-test-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  const database = `herald_wp_${run.replace(/\W/g, '_').slice('herald-test-'.length)}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-wordpress-'));
  const contentDir = path.join(dir, 'wp-content');
  fs.mkdirSync(path.join(contentDir, 'uploads'), { recursive: true });
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const url = `http://${host}`;
  const configFile = path.join(CONFIG_DIR, `config-${run}.php`);
  const salts = ['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT']
    .map((name) => `define('${name}', '${crypto.randomBytes(24).toString('hex')}');`)
    .join('\n');
  fs.writeFileSync(
    configFile,
    `<?php
define('DB_NAME', '${database}');
define('DB_USER', '${MARIADB.user}');
define('DB_PASSWORD', '${MARIADB.password}');
define('DB_HOST', '${MARIADB.host}:${MARIADB.port}');
define('WP_HOME', '${url}');
define('WP_SITEURL', '${url}');
define('WP_CONTENT_DIR', ${phpString(contentDir)});
define('WP_CONTENT_URL', '${url}/wp-content');
define('WP_ENVIRONMENT_TYPE', 'local');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
${salts}
`,
  );
  const env = { WORDPRESS_CONFIG: run };
  let child: ChildProcess | undefined;
  const cleanUp = () => {
    fs.rmSync(configFile, { force: true });
    fs.rmSync(dir, { recursive: true, force: true });
    try {
      mariadb(`DROP DATABASE IF EXISTS \`${database}\``);
    } catch {
      /* already gone */
    }
  };
  try {
    mariadb(`CREATE DATABASE \`${database}\``);
    fs.writeFileSync(path.join(dir, 'load.php'), loader(host));
    fs.writeFileSync(path.join(dir, 'install.php'), `${loader(host)}${INSTALL}`);
    const installed = JSON.parse(runPhp(path.join(dir, 'install.php'), env));
    fs.writeFileSync(path.join(dir, 'router.php'), router(contentDir));
    let output = '';
    child = spawn('php', ['-S', host, '-t', WORDPRESS_DIR, path.join(dir, 'router.php')], {
      env: { ...process.env, ...env, PHP_CLI_SERVER_WORKERS: '2' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: the server forks workers, and stopping the group stops them all.
      detached: true,
    });
    // Keep the last of what the server says, for a failure message.
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    await waitForHttp(`${url}/wp-json/`, child, () => output);
    const server = child;
    return {
      url,
      ...installed,
      php(code: string) {
        const file = path.join(dir, `run-${crypto.randomBytes(4).toString('hex')}.php`);
        fs.writeFileSync(file, `${loader(host)}require ${phpString(WORDPRESS_DIR)} . '/wp-load.php';\n${code}\n`);
        try {
          return runPhp(file, env);
        } finally {
          fs.rmSync(file, { force: true });
        }
      },
      async close() {
        if (server.exitCode === null) {
          const exited = new Promise((resolve) => server.once('exit', resolve));
          process.kill(-server.pid!, 'SIGTERM');
          await exited;
        }
        cleanUp();
      },
    };
  } catch (err) {
    if (child?.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    cleanUp();
    throw err;
  }
}
