/* plotly.js with only the trace types AscendSim's figures draw (app/web/figures.py, figures_matrices.py):
 * scatter (always in core), bar, heatmap and scattergl; about a third of the full plotly.min.js, which a
 * page otherwise downloads and evaluates (4.8 MB) before its first graph. Dash's Graph uses window.Plotly
 * when it is already defined, so the full bundle is never fetched. AscendSimTraces is what
 * tests/test_web_bundles.py checks every figure's trace type against. */
"use strict";
const Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/heatmap"), require("plotly.js/lib/scattergl")]);

Plotly.AscendSimTraces = ["bar", "heatmap", "scatter", "scattergl"];
module.exports = Plotly;
