/**
 * Who may import whom in Kopek (ARCHITECTURE.md says why). `npm run deps` checks it; .ci/run runs it.
 * Violations that stand today are listed in .dependency-cruiser-known-violations.json and shown as
 * warnings until they are mended; any new one fails the check.
 */

/** The ground: shared pieces that know no feature. */
const GROUND =
  '^src/(core|calendar|money|db|crypto|net|limits)/|^src/(clock|config|ids|periodic|backlog-metrics|code-root)\\.ts$';
/** Features and the adapters above them. */
const FEATURES =
  '^src/(shops|customers|products|plans|subscriptions|charging|billing|gateway|cards|checkout|proofs|notifications|mail|ledger|cabinet|compose|control|cli|http|pages)/|^src/(context|cli)\\.ts$';
/**
 * Features that have a face: an `index.ts` saying what others may use of them. Everyone outside the
 * feature (the composition root aside) imports it through that file only. A feature joins this list
 * when its face lands (docs/redesign-plan.md, increment 10).
 */
const FACED_FEATURES = [
  'charging',
  'ledger',
  'customers',
  'products',
  'cards',
  'plans',
  'notifications',
  'mail',
  'shops',
  'subscriptions',
  'gateway',
  'billing',
  'checkout',
  'proofs',
];
const FACED = FACED_FEATURES.join('|');

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
        'The shared ground (core, db, crypto, net, limits, calendar, money, clock, config, ids) imports no feature.',
      from: { path: GROUND },
      to: { path: FEATURES },
    },
    {
      name: 'no-other-feature-repository',
      severity: 'error',
      comment: "A feature reads another feature's rows through that feature's service, never its repository.",
      // The composition root builds from every feature, so it may reach any of them.
      from: { path: '^src/([^/]+)/', pathNot: '^src/compose/' },
      to: { path: 'repository\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'only-through-face',
      severity: 'error',
      comment:
        "A feature with a face (index.ts) is imported through it only: what is not on the face is that feature's own business.",
      // $1 is the importing folder (or root file): a feature's own files may import each other.
      from: { path: '^src/([^/.]+)(/|\\.tsx?$)', pathNot: '^src/compose/' },
      // The gateway has a second face, its client (gateway/money.ts), which only charging may import.
      to: {
        path: `^src/(${FACED})/`,
        pathNot: ['^src/$1/', `^src/(${FACED})/index\\.ts$`, '^src/gateway/money\\.ts$'],
      },
    },
    {
      name: 'money-verbs-in-charging',
      severity: 'error',
      comment:
        "The gateway's client moves money (payment, authorization, capture, void, refund): every charge has one owner, the charging module, which sends it with its gateway idempotency key.",
      from: { path: '^src/', pathNot: '^src/(charging|gateway|compose)/' },
      to: { path: '^src/gateway/(money|client|http-client|children|charge)\\.ts$' },
    },
    {
      name: 'no-upward-from-features',
      severity: 'error',
      comment:
        'Features (and the HTTP plumbing) do not import what composes them: the composition root (the app, the services, the server), the CLI, the control socket.',
      from: {
        path: '^src/(shops|customers|products|plans|subscriptions|charging|billing|gateway|cards|checkout|proofs|notifications|mail|ledger|cabinet|http|pages)/|^src/context\\.ts$',
      },
      to: { path: '^src/(compose|cli|control)/|^src/cli\\.ts$' },
    },
    {
      name: 'compose-below-the-commands',
      severity: 'error',
      comment:
        'The composition root is used by the CLI and the control socket, never the other way round: `kopek serve` and the store commands build on it.',
      from: { path: '^src/compose/' },
      to: { path: '^src/(cli|control)/|^src/cli\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.tsx?$' },
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
