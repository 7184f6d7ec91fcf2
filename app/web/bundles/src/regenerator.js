/* The one thing Dash's own bundles (dash_renderer, dash_core_components) need from the @babel/polyfill 7 that Dash
 * puts first on every page: the global regeneratorRuntime their transpiled async functions call. app/web/app.py
 * puts this bundle in the polyfill's place (the polyfill's core-js 2 replaces String.prototype.trim, toFixed and
 * the typed arrays' methods of a modern browser with slower ones, and took 0.16-0.26 s of each page load). */
window.regeneratorRuntime = require("regenerator-runtime/runtime");
