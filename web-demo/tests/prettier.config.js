// Prettier for the files eslint.config.js lints (the paths are in
// package.json's `lint` and `format` scripts). 140 columns and single quotes
// are the style the files were written in: of the widths tried, 140 changed
// the fewest lines when the check was introduced. The rest is Prettier's
// default (semicolons, trailing commas, two spaces, `(x) =>`).
export default {
  printWidth: 140,
  singleQuote: true,
  overrides: [
    {
      // The widget loader is ES5 (see eslint.config.js), which allows no
      // trailing comma after a call's last argument. (Paths here are
      // relative to this file.)
      files: '../widget/widget.js',
      options: { trailingComma: 'es5' },
    },
  ],
};
