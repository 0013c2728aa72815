// Netron's open-to-drawn time for model files, for the same-run comparison with tdfx_gui_bench.
//
//   node tests/benchmarks/netron_open_bench.mjs --netron DIR --playwright DIR [--chromium PATH]
//        [--repeat N] [--screenshot PNG] MODEL...
//
// DIR for --netron is the source/ folder of the public repository lutzroeder/netron (its browser
// build); --playwright is a node_modules folder holding npm's playwright-core. The folder is served
// from 127.0.0.1 (nothing leaves the machine), Debian's chromium opens it in a 1600x1000 window,
// and each run loads the page afresh, sets MODEL on the page's file input and waits until the body
// leaves the spinner and the graph's nodes are in the page. Prints, per model, the median of N
// runs as one JSON line: {"model": ..., "netron_s": ..., "nodes": ..., "runs": [...]}. With
// --screenshot, each drawn page is also saved there (the last one stays), to see what was timed.
// Neither Netron nor playwright-core is a dependency of tdfx: this script is run by hand (see
// docs/benchmarks.md), never by CI, which cannot fetch them.
import { createRequire } from 'node:module';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

function parseArgs(argv) {
    const args = { repeat: 3, chromium: '/usr/bin/chromium', models: [] };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === '--netron') args.netron = argv[++i];
        else if (a === '--playwright') args.playwright = argv[++i];
        else if (a === '--chromium') args.chromium = argv[++i];
        else if (a === '--screenshot') args.screenshot = argv[++i];
        else if (a === '--repeat') args.repeat = Math.max(1, parseInt(argv[++i], 10));
        else args.models.push(a);
    }
    if (!args.netron || !args.playwright || args.models.length === 0) {
        process.stderr.write('usage: netron_open_bench.mjs --netron DIR --playwright DIR [--chromium PATH] [--repeat N] [--screenshot PNG] MODEL...\n');
        process.exit(2);
    }
    return args;
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json',
    '.css': 'text/css', '.png': 'image/png', '.ico': 'image/x-icon', '.svg': 'image/svg+xml' };

// A static server for Netron's folder; a missing file (a metadata file of another format) is a 404.
function serve(root) {
    const server = http.createServer((request, response) => {
        const url = new URL(request.url, 'http://127.0.0.1');
        const file = path.join(root, decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname));
        if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
            response.writeHead(404);
            response.end();
            return;
        }
        response.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
        fs.createReadStream(file).pipe(response);
    });
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function median(values) {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

async function openOnce(browser, origin, model, screenshot) {
    // A fresh context each run (no cache), with the cookie that answers Netron's consent notice.
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    await context.addCookies([{ name: 'consent', value: Date.now().toString(), url: origin }]);
    const page = await context.newPage();
    // Netron replaces window.eval with a function that throws, which also stops playwright's own
    // evaluation in the page. Assignments to it are ignored here; Netron itself never calls eval.
    await page.addInitScript(() => {
        const original = window.eval;
        Object.defineProperty(window, 'eval', { get: () => original, set: () => {}, configurable: true });
    });
    try {
        await page.goto(`${origin}/index.html`);
        await page.waitForFunction(() => document.body.className === 'welcome', null, { timeout: 60000 });
        const start = Date.now();
        await page.setInputFiles('#open-file-dialog', model);
        // Drawn: the spinner is gone and the graph's nodes are in the document (and so laid out).
        const handle = await page.waitForFunction(() => {
            const body = document.body.classList;
            if (body.contains('spinner') || body.contains('welcome')) return false;
            const nodes = document.querySelectorAll('#canvas g.node').length;
            return nodes > 0 ? nodes : false;
        }, null, { timeout: 300000, polling: 'raf' });
        const seconds = (Date.now() - start) / 1000;
        if (screenshot) await page.screenshot({ path: screenshot });
        return { seconds, nodes: await handle.jsonValue() };
    } finally {
        await context.close();
    }
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    const require = createRequire(path.join(path.resolve(args.playwright), 'index.js'));
    const { chromium } = require('playwright-core');
    const root = path.resolve(args.netron);
    const server = await serve(root);
    const origin = `http://127.0.0.1:${server.address().port}`;
    const browser = await chromium.launch({ executablePath: args.chromium, args: ['--no-sandbox'] });
    try {
        for (const model of args.models) {
            const runs = [];
            let nodes = 0;
            for (let i = 0; i < args.repeat; i++) {
                const run = await openOnce(browser, origin, path.resolve(model), args.screenshot);
                runs.push(run.seconds);
                nodes = run.nodes;
            }
            process.stdout.write(JSON.stringify({ model: path.basename(model), netron_s: median(runs), nodes, runs }) + '\n');
        }
    } finally {
        await browser.close();
        server.close();
    }
}

main().catch((error) => {
    process.stderr.write(`netron_open_bench: ${error.message}\n`);
    process.exit(1);
});
