/* esbuild for build.sh: `node build.js NAME OUT META`. editor: CodeMirror 6 as one IIFE. regenerator: the
 * regeneratorRuntime global Dash's bundles need (src/regenerator.js). plotly: plotly.js's
 * own esbuild set-up (its esbuild-config.js: shaders inlined by the glsl plugin, CSS inlined, regl and stream
 * aliased to the browser builds) on src/plotly.js, exposed as window.Plotly. */
"use strict";
const esbuild = require("esbuild");
const fs = require("fs");

const [name, outfile, metafile] = process.argv.slice(2);
const common = {
    bundle: true, minify: true, format: "iife", charset: "utf8", legalComments: "none", metafile: true,
    logLevel: "warning", outfile,
};
const builds = {
    editor: () => ({ ...common, entryPoints: ["src/editor.js"], target: "es2020" }),
    regenerator: () => ({ ...common, entryPoints: ["src/regenerator.js"], target: "es2016" }),
    plotly: () => {
        const { environmentPlugin } = require("esbuild-plugin-environment");
        const { glsl } = require("esbuild-plugin-glsl");
        const inlineCss = require("esbuild-plugin-inline-css");
        return {
            ...common, entryPoints: ["src/plotly.js"], target: "es2016", globalName: "Plotly",
            plugins: [inlineCss(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
            alias: { regl: "@plotly/regl", stream: "stream-browserify" },
            define: { global: "window", "define.amd": "false" },
        };
    },
};
esbuild.build(builds[name]()).then((r) => fs.writeFileSync(metafile, JSON.stringify(r.metafile)));
