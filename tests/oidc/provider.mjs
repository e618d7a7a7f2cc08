// A real OpenID Connect provider for the tests: node-oidc-provider (bridge_js's devDependency)
// with its development sign-in pages, on 127.0.0.1. Usage:
//
//   node tests/oidc/provider.mjs --port=0 [--clock-skew=SECONDS]
//
// It prints one line of JSON, {"issuer": ...}, once it listens, then serves until killed.
// The client "kanban" (secret "kanban-secret") may come back to /oidc/callback/ on any
// 127.0.0.1 port: it is registered as a native application, whose loopback redirect URIs
// match on any port (RFC 8252 7.3), so one provider serves every test's worker.
//
// Anyone may sign in, under any login name with any password (the development pages); a few
// names stand for the people the tests need, see ACCOUNTS. --clock-skew moves the provider's
// clock (every token it makes is dated by it): =-600 makes ID tokens that expired 5 minutes ago.

import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

// Resolved from bridge_js/, where `npm ci` installs it.
const require = createRequire(new URL('../../bridge_js/package.json', import.meta.url));
const { default: Provider } = await import(require.resolve('oidc-provider'));

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'clock-skew': { type: 'string', default: '0' },
  },
});

const skewMs = Number(args['clock-skew']) * 1000;
if (skewMs) {
  const realNow = Date.now;
  Date.now = () => realNow() + skewMs;
}

/** Who signs in: a login name not listed here is a person named after it. */
const ACCOUNTS = {
  dave: { preferred_username: 'dave', email: 'dave@example.com', name: 'Dave Doe', groups: ['staff-not'] },
  erin: { preferred_username: 'erin', email: 'erin@example.com', name: 'Erin Admin', groups: ['kanban-admins'] },
  // "dаve" with a Cyrillic а (U+0430): reads as dave, is not dave.
  lookalike: { preferred_username: 'd\u0430ve', email: 'mallory@example.com', name: 'Mallory' },
  // A claim of 10 MB, as a hostile or broken provider might send.
  huge: { preferred_username: 'huge', email: 'huge@example.com', name: 'x'.repeat(10 * 2 ** 20) },
  nameless: { email: 'nameless@example.com' },
};

function claimsOf(id) {
  return ACCOUNTS[id] ?? { preferred_username: id, email: `${id}@example.com`, name: id };
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' };

const configuration = {
  clients: [
    {
      client_id: 'kanban',
      client_secret: 'kanban-secret',
      application_type: 'native',
      redirect_uris: ['http://127.0.0.1/oidc/callback/'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ['test-cookie-key-one', 'test-cookie-key-two'] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['preferred_username', 'name'],
    groups: ['groups'],
  },
  scopes: ['openid', 'email', 'profile', 'groups'],
  // Five minutes: with --clock-skew -600 each ID token has expired when it arrives.
  ttl: { IdToken: 300, AccessToken: 600, AuthorizationCode: 60, Interaction: 3600, Session: 3600, Grant: 3600 },
  async findAccount(_ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email_verified: true, ...claimsOf(id) };
      },
    };
  },
  renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = `<h1>${out.error}</h1><p>${out.error_description ?? ''}</p>`;
  },
};

const port = Number(args.port);
// The issuer names the port, so listen first and make the provider once it is known.
const { createServer } = await import('node:http');
let handler = (_req, res) => { res.statusCode = 503; res.end(); };
const server = createServer((req, res) => handler(req, res));
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration);
  provider.on('server_error', (_ctx, error) => console.error(error));
  handler = provider.callback();
  console.log(JSON.stringify({ issuer }));
});
