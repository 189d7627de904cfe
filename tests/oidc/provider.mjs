// A real OpenID provider for the SSO integration tests: oidc-provider (an
// OpenID Certified implementation) on 127.0.0.1, with one confidential
// client and its development sign-in pages (any login, any password).
//
// Environment: OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI.
// The account signed in as `name@domain` has that address as its verified
// email; `unverified:name@domain` has it unverified. Once listening, one
// line goes to stdout: {"issuer": "http://127.0.0.1:<port>"}.
import http from 'node:http';
import Provider from 'oidc-provider';

const { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI } = process.env;
if (!OIDC_CLIENT_ID || !OIDC_CLIENT_SECRET || !OIDC_REDIRECT_URI) {
  console.error('set OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_REDIRECT_URI');
  process.exit(2);
}

function account(id) {
  const unverified = id.startsWith('unverified:');
  const email = unverified ? id.slice('unverified:'.length) : id;
  return {
    accountId: id,
    async claims() {
      return {
        sub: id,
        email,
        email_verified: !unverified,
        name: email.split('@')[0],
      };
    },
  };
}

// The issuer holds the port, so listen first and build the provider after.
let handle = (_req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = http.createServer((req, res) => handle(req, res));
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: OIDC_CLIENT_ID,
        client_secret: OIDC_CLIENT_SECRET,
        redirect_uris: [OIDC_REDIRECT_URI],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    // The scopes ask for these claims; put them in the ID token itself, as
    // the service reads only the ID token.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => account(id),
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['supportdesk-tests-only'] },
  });
  handle = provider.callback();
  console.log(JSON.stringify({ issuer }));
});
process.on('SIGTERM', () => process.exit(0));
