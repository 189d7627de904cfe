// ESLint for the web client and the JavaScript around it: ESLint's
// recommended rules, with the globals of where each file runs. Run from the
// repository root (`npm run lint` here does that): the paths below are the
// root's, since the config is passed with `-c` and its files lie outside
// this folder.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['**/node_modules/', 'web-demo/tests/screenshots/'] },
  js.configs.recommended,
  {
    // `const { changes, ...ticket } = data` names what it leaves out of the
    // rest: those names are the point, not unused variables.
    rules: { 'no-unused-vars': ['error', { ignoreRestSiblings: true }] },
  },
  {
    // The demo's pages and the widget's frame: ES modules in the browser.
    files: ['web-demo/public/js/**/*.js', 'web-demo/widget/frame.js'],
    languageOptions: { sourceType: 'module', globals: globals.browser },
  },
  {
    // The widget loader: a classic script on the customer's page (one
    // <script src> tag, no module), strict by hand and written in ES5 so
    // that whatever page includes it can parse it.
    files: ['web-demo/widget/widget.js'],
    languageOptions: { ecmaVersion: 5, sourceType: 'script', globals: globals.browser },
  },
  {
    // The browser tests run in node, and the functions they hand to
    // page.evaluate run in the page: both sets of globals are real there.
    files: ['web-demo/tests/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.node, ...globals.browser } },
  },
  {
    // The SSO tests' OpenID providers: node ES modules.
    files: ['tests/oidc/**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: globals.node },
  },
];
