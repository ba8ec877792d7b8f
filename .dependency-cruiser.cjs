/**
 * Who may import whom in Kopek (ARCHITECTURE.md says why). `npm run deps` checks it; .ci/run runs it.
 * Violations that stand today are listed in .dependency-cruiser-known-violations.json and shown as
 * warnings until they are mended; any new one fails the check.
 */

/** The ground: shared pieces that know no feature. */
const GROUND =
  '^src/(core|calendar|money|db|crypto|net)/|^src/(clock|config|ids|periodic|backlog-metrics)\\.ts$';
/** Features and the adapters above them. */
const FEATURES =
  '^src/(shops|customers|products|plans|subscriptions|charging|billing|gateway|cards|checkout|proofs|notifications|mail|ledger|cabinet|control|cli|http|pages)/|^src/(context|server|cli)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other in a loop: one of them belongs elsewhere.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'ground-knows-no-feature',
      severity: 'error',
      comment:
        'The shared ground (core, db, crypto, net, calendar, money, clock, config, ids) imports no feature.',
      from: { path: GROUND },
      to: { path: FEATURES },
    },
    {
      name: 'no-other-feature-repository',
      severity: 'error',
      comment: "A feature reads another feature's rows through that feature's service, never its repository.",
      from: { path: '^src/([^/]+)/' },
      to: { path: 'repository\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'no-upward-from-features',
      severity: 'error',
      comment:
        'Features do not import the HTTP app, the CLI, the control socket or the server that compose them.',
      from: {
        path: '^src/(shops|customers|products|plans|subscriptions|charging|billing|gateway|cards|checkout|proofs|notifications|mail|ledger)/',
      },
      to: { path: '^src/(cli|control)/|^src/(cli|server)\\.ts$|^src/http/app\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.tsx?$' },
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
