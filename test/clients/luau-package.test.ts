// The Luau module as a package: clients/luau/wally.toml against Wally's manifest format
// (libwally's manifest.rs and package_name.rs: [package] with a scope/name of lowercase
// letters, digits and dashes, a semver version, a registry and a realm), the package's Rojo
// project, and the install snippets of clients/luau/README.md (the dependency line and the two
// Rojo projects) against the manifest and the folders they name.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'smol-toml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE_DIR = join(ROOT, 'clients/luau');
const readme = readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8');
const fenced = (lang: string) => [...readme.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

const manifest = parse(readFileSync(join(PACKAGE_DIR, 'wally.toml'), 'utf8')) as {
  package: Record<string, unknown>;
  [table: string]: unknown;
};

/** The keys Wally's Manifest and Package structs accept (serde, kebab-case). */
const MANIFEST_TABLES = ['package', 'place', 'dependencies', 'server-dependencies', 'dev-dependencies'];
const PACKAGE_FIELDS = ['name', 'version', 'registry', 'realm', 'description', 'license', 'authors', 'include', 'exclude', 'private'];
const NAME_PART = /^[a-z0-9-]{1,64}$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

interface RojoNode {
  $path?: string;
  $className?: string;
  [child: string]: unknown;
}

describe('clients/luau as a Wally package', () => {
  it('wally.toml has only the tables and [package] fields Wally reads, each of the right form', () => {
    expect(MANIFEST_TABLES).to.include.members(Object.keys(manifest));
    expect(PACKAGE_FIELDS).to.include.members(Object.keys(manifest.package));
    const { name, version, registry, realm, description } = manifest.package;
    const [scope, pkg, ...rest] = String(name).split('/');
    expect(rest, 'scope/name').to.deep.equal([]);
    expect(scope).to.match(NAME_PART);
    expect(pkg).to.match(NAME_PART);
    expect(version).to.be.a('string').and.match(SEMVER);
    expect(registry, 'the public index').to.equal('https://github.com/UpliftGames/wally-index');
    // HttpService works on game servers only.
    expect(realm).to.equal('server');
    expect(description).to.be.a('string').and.not.be.empty;
    for (const table of ['dependencies', 'server-dependencies', 'dev-dependencies']) {
      expect(manifest[table] ?? {}, `[${table}]: the module has no dependencies`).to.deep.equal({});
    }
  });

  it('default.project.json maps src (init.luau: one ModuleScript, with Leaderboard, Mock and the facades DataStoreService and ProfileStore as its children) under the package name, as Wally publishes it', () => {
    const project = JSON.parse(readFileSync(join(PACKAGE_DIR, 'default.project.json'), 'utf8')) as { name: string; tree: RojoNode };
    // Wally renames the project to the package's name on publish; match it so nothing changes then.
    expect(project.name).to.equal(String(manifest.package.name).split('/')[1]);
    expect(project.tree).to.deep.equal({ $path: 'src' });
    expect(existsSync(join(PACKAGE_DIR, 'src/init.luau'))).to.equal(true);
    // Rojo makes every other file of src a child ModuleScript of init.luau's, named after it:
    // the four that init.luau requires as script.<name>, so the facades ship with the package.
    const children = ['DataStoreService', 'Leaderboard', 'Mock', 'ProfileStore'];
    expect(readdirSync(join(PACKAGE_DIR, 'src')).sort()).to.deep.equal([...children.map((c) => `${c}.luau`), 'init.luau']);
    const init = readFileSync(join(PACKAGE_DIR, 'src/init.luau'), 'utf8');
    for (const child of children) expect(init).to.include(`require(script.${child})`);
  });

  it("the README's dependency line names this package and version, under [server-dependencies]", () => {
    const [dependency] = fenced('toml');
    const parsed = parse(dependency!) as Record<string, Record<string, string>>;
    expect(Object.keys(parsed)).to.deep.equal(['server-dependencies']);
    expect(parsed['server-dependencies']).to.deep.equal({ PlayerData: `${manifest.package.name}@${manifest.package.version}` });
  });

  it("the README's Rojo projects parse, keep the module in ServerStorage, and point at the package's folders", () => {
    const projects = fenced('json')
      .map((text) => JSON.parse(text) as { name?: string; tree?: RojoNode })
      .filter((p) => p.tree !== undefined);
    expect(projects).to.have.length(2);
    const [withWally, withoutWally] = projects as Array<{ name: string; tree: RojoNode }>;
    for (const project of [withWally!, withoutWally!]) {
      expect(project.tree.$className).to.equal('DataModel');
      expect(project.tree.ReplicatedStorage, 'never where clients receive it').to.equal(undefined);
    }
    const storage = (p: { tree: RojoNode }) => p.tree.ServerStorage as Record<string, RojoNode>;
    // With Wally: wally install writes the realm-server packages to ServerPackages/.
    expect(storage(withWally!).ServerPackages).to.deep.equal({ $path: 'ServerPackages' });
    // Without: a copy of clients/luau, whose own default.project.json Rojo then follows.
    const vendored = storage(withoutWally!).PlayerData!.$path!;
    expect(vendored).to.match(/\/clients\/luau$/);
    expect(existsSync(join(ROOT, 'clients/luau/default.project.json'))).to.equal(true);
    expect(readme).to.include('require(ServerStorage.ServerPackages.PlayerData)');
  });

  it("the README's local secret for Studio is one line of JSON: the key in base64 and the domain", () => {
    const secrets = fenced('json').filter((text) => text.includes('pds_api_key'));
    expect(secrets).to.have.length(1);
    expect(secrets[0]!.trim().split('\n')).to.have.length(1);
    const parsed = JSON.parse(secrets[0]!) as Record<string, [string, string]>;
    const [value, domain] = parsed.pds_api_key!;
    expect(Buffer.from(value, 'base64').toString('utf8')).to.equal('pds_...');
    expect(domain).to.equal('pds.example.com');
    // The server script reads the secret under that name.
    expect(readme).to.include('HttpService:GetSecret("pds_api_key")');
  });
});
