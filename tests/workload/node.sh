# node and npm: node -e, npm test, a local file: dependency installed offline.
node -e 'const os=require("os"); console.log("node-ok", 6*7, os.cpus().length > 0)' | grep -qx 'node-ok 42 true' && echo "OK node"
mkdir -p w/node/localpkg w/node/app && cd w/node || exit 1
printf '{"name":"localpkg","version":"1.0.0","main":"index.js"}\n' > localpkg/package.json
printf 'module.exports = (x) => x * 2;\n' > localpkg/index.js
printf '{"name":"app","version":"1.0.0","private":true,"scripts":{"test":"node test.js"}}\n' > app/package.json
printf 'const d = require("localpkg"); if (d(21) !== 42) process.exit(1); console.log("app-test-passed");\n' > app/test.js
cd app || exit 1
npm install --offline --no-audit --no-fund ../localpkg >npm-install.log 2>&1 \
  && node -e 'process.exit(require("./package.json").dependencies.localpkg === "file:../localpkg" ? 0 : 1)' && test -e node_modules/localpkg/index.js \
  && echo "OK npm-local-dep" || cat npm-install.log
npm test 2>&1 | grep -qx 'app-test-passed' && echo "OK npm-test"
