/* Writes the licence notice of the third-party packages esbuild put in a bundle (read from its metafile):
 * each package with its version and licence, then each distinct licence text once.
 * Run by build.sh: `node notice.js META BUNDLE_NAME`. */
"use strict";
const fs = require("fs");
const path = require("path");

const meta = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const dirs = new Set();
for (const input of Object.keys(meta.inputs)) {
    const m = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);  // the innermost package
    if (m) { dirs.add(m[1]); }
}
const byText = new Map();  // licence text -> package names
const lines = [];
for (const dir of [...dirs].sort()) {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    const file = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
    const licence = typeof pkg.license === "string" ? pkg.license : JSON.stringify(pkg.license || pkg.licenses);
    if (!licence) { throw new Error(`${pkg.name} names no licence`); }
    if (!file) {  // some small packages publish only the licence's name in package.json
        lines.push(`${pkg.name} ${pkg.version} (${licence}; the npm package has no licence file)`);
        continue;
    }
    const text = fs.readFileSync(path.join(dir, file), "utf8").trim();
    lines.push(`${pkg.name} ${pkg.version} (${licence})`);
    byText.set(text, [...(byText.get(text) || []), pkg.name]);
}
let out = `Third-party software in ${process.argv[3]} (built by app/web/bundles/build.sh from package-lock.json):\n\n`;
out += lines.join("\n") + "\n";
for (const [text, names] of byText) { out += `\n---- ${names.join(", ")}\n\n${text}\n`; }
process.stdout.write(out);
