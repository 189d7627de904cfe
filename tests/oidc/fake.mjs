// A deliberately broken OpenID issuer for the SSO tests' negative cases the
// real provider never produces. It answers discovery, JWKS, an
// authorization endpoint that signs in at once, and a token endpoint whose
// ID token is made wrong according to the client id asked for:
//   good         a correct token (shows the fake itself is accepted)
//   wrong_aud    `aud` names another client
//   wrong_iss    `iss` names another issuer than the one discovery names
//   expired      `exp` passed ten minutes ago
//   alg_none     unsigned (`alg: none`)
//   wrong_key    signed by a key the JWKS does not hold
//   stale_nonce  carries the nonce of the first sign-in it saw, every time
// Any client secret is accepted. The email is `sso.fake@acme.test`.
// For the tests of what the service keeps: `GET /_requests` answers how many
// requests each path has had ({"/jwks": 1, …}), and `POST /_rotate` adds a
// key `k2` to the JWKS and signs every later token with it.
// Once listening, one line goes to stdout: {"issuer": "http://127.0.0.1:<port>"}.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

const { privateKey, publicKey } = await generateKeyPair('RS256');
const other = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
const rotated = await generateKeyPair('RS256');
const jwk2 = { ...(await exportJWK(rotated.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' };
let isRotated = false;
const requests = {};
const codes = new Map();
let firstNonce;

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function idToken(issuer, mode, nonce) {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: mode === 'wrong_iss' ? `${issuer}/elsewhere` : issuer,
    sub: 'fake-subject',
    aud: mode === 'wrong_aud' ? 'another-client' : mode,
    iat: mode === 'expired' ? now - 1200 : now,
    // An hour: the tests move the service's clock past what it keeps.
    exp: mode === 'expired' ? now - 600 : now + 3600,
    nonce: mode === 'stale_nonce' ? firstNonce : nonce,
    email: 'sso.fake@acme.test',
    email_verified: true,
    name: 'Fake',
  };
  if (mode === 'alg_none') {
    return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
  }
  if (mode === 'wrong_key') {
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(other.privateKey);
  }
  const [key, kid] = isRotated ? [rotated.privateKey, 'k2'] : [privateKey, 'k1'];
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
}

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = http.createServer(async (req, res) => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const url = new URL(req.url, issuer);
  if (url.pathname === '/_requests') return json(res, 200, requests);
  if (url.pathname === '/_rotate' && req.method === 'POST') {
    isRotated = true;
    return json(res, 200, { kid: 'k2' });
  }
  requests[url.pathname] = (requests[url.pathname] ?? 0) + 1;
  if (url.pathname === '/.well-known/openid-configuration') {
    return json(res, 200, {
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['S256'],
    });
  }
  if (url.pathname === '/jwks') return json(res, 200, { keys: isRotated ? [jwk, jwk2] : [jwk] });
  if (url.pathname === '/auth') {
    const q = url.searchParams;
    const code = randomBytes(16).toString('hex');
    codes.set(code, { mode: q.get('client_id'), nonce: q.get('nonce') });
    firstNonce ??= q.get('nonce');
    const back = new URL(q.get('redirect_uri'));
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state'));
    res.writeHead(302, { location: back.toString() });
    return res.end();
  }
  if (url.pathname === '/token' && req.method === 'POST') {
    let body = '';
    for await (const chunk of req) body += chunk;
    const login = codes.get(new URLSearchParams(body).get('code'));
    if (!login) return json(res, 400, { error: 'invalid_grant' });
    return json(res, 200, {
      access_token: randomBytes(16).toString('hex'),
      token_type: 'Bearer',
      expires_in: 300,
      id_token: await idToken(issuer, login.mode, login.nonce),
    });
  }
  json(res, 404, { error: 'not_found' });
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ issuer: `http://127.0.0.1:${server.address().port}` }));
});
process.on('SIGTERM', () => process.exit(0));
