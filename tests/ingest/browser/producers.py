"""The real producers of browser traces, run by the producer tests: Playwright's Python package and the
@playwright/test runner (Node), both driving Debian's `chromium`, against a small site served from loopback.

`site()` serves the pages; `record_library_trace()` and `record_test_runner_traces()` run the same short
session (open the form, type a name, press the button that fetches a greeting, follow a link, go back) and
return what they wrote. A test whose producer is not installed skips, and fails under CI (`tests/parts.py`),
where the producers extra is installed.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path


REPO = Path(__file__).resolve().parents[3]
CHROMIUM = "/usr/bin/chromium"
# no sandbox (containers run as root), no GPU, and nothing that talks to Google's servers
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]
VIEWPORT = {"width": 640, "height": 480}
# where the producers make target installs @playwright/test (npm install --prefix .venv/node)
NODE_MODULES = Path(os.environ.get("PLAYWRIGHT_TEST_NODE_MODULES", REPO / ".venv" / "node" / "node_modules"))

INDEX = """<!doctype html>
<html><head><title>Greeter</title><link rel="icon" href="data:,"></head>
<body>
<h1>Greeter</h1>
<label>Name <input id="name" name="name"></label>
<button id="greet" onclick="fetch('/api/greet?name=' + encodeURIComponent(document.getElementById('name').value))
  .then(r => r.json()).then(j => { document.getElementById('out').textContent = j.greeting; })">Greet</button>
<p id="out"></p>
<a href="/next.html">Next page</a>
</body></html>
"""
NEXT = """<!doctype html>
<html><head><title>Next</title><link rel="icon" href="data:,"></head>
<body><h1>Second page</h1><a href="/index.html">Back to the form</a></body></html>
"""


def playwright_available() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return Path(CHROMIUM).exists()


def playwright_test_available() -> bool:
    return bool(shutil.which("node")) and (NODE_MODULES / "@playwright" / "test" / "cli.js").exists() \
        and Path(CHROMIUM).exists()


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        url = urllib.parse.urlsplit(self.path)
        if url.path in ("/", "/index.html"):
            self._send(200, "text/html; charset=utf-8", INDEX.encode())
        elif url.path == "/next.html":
            self._send(200, "text/html; charset=utf-8", NEXT.encode())
        elif url.path == "/api/greet":
            name = urllib.parse.parse_qs(url.query).get("name", [""])[0]
            self._send(200, "application/json", json.dumps({"greeting": f"Hi {name}"}).encode())
        else:
            self._send(404, "text/plain", b"not found")

    def _send(self, status: int, mime: str, body: bytes):
        self.send_response(status)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")  # every navigation is a request the HAR records
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def site():
    """The site on a free loopback port; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def record_library_trace(base: str, out: Path, title: str = "greet a user",
                         fixed_viewport: bool = True) -> tuple[Path, Path]:
    """The session through Playwright's Python API with context tracing (screenshots, snapshots) and a HAR;
    returns (trace.zip, session.har). `fixed_viewport=False` gives the context no viewport (`no_viewport`):
    the page takes the browser window's size."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    trace, har = out / "trace.zip", out / "session.har"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            size = {"viewport": VIEWPORT} if fixed_viewport else {"no_viewport": True}
            context = browser.new_context(**size, record_har_path=str(har))
            context.tracing.start(screenshots=True, snapshots=True, title=title)
            page = context.new_page()
            page.goto(f"{base}/index.html")
            # the screencast's first frame of the page is sent after a paint and can reach the trace after the next
            # call starts on a loaded machine (then that call's screen has no screenshot): a second gives it time
            # (a sleep here, not a Playwright call, which the trace would record as a step)
            time.sleep(1)
            page.fill("#name", "Ada")
            page.click("#greet")
            page.wait_for_selector("text=Hi Ada")
            page.press("#name", "Control+A")
            page.click("text=Next page")
            page.wait_for_selector("text=Second page")  # the next page loaded (a loaded machine is slow)
            page.go_back()
            context.tracing.stop(path=str(trace))
            context.close()  # writes the HAR
        finally:
            browser.close()
    return trace, har


CONFIG = """const { defineConfig } = require('@playwright/test');
module.exports = defineConfig({
  testDir: __dirname, outputDir: process.env.OUT_DIR, reporter: 'line', workers: 1, retries: 0,
  use: {
    trace: 'on', baseURL: process.env.BASE_URL, viewport: %(viewport)s,
    launchOptions: { executablePath: %(chromium)s, args: %(args)s },
  },
});
"""
SPEC = """const { test, expect } = require('@playwright/test');

test('greets the user', async ({ page }) => {
  await page.goto('/index.html');
  await page.fill('#name', 'Ada');
  await page.click('#greet');
  await expect(page.locator('#out')).toHaveText('Hi Ada');
  await page.click('text=Next page');
  await expect(page).toHaveTitle('Next');
});

test('expects the wrong greeting', async ({ page }) => {
  await page.goto('/index.html');
  await page.fill('#name', 'Ada');
  await page.click('#greet');
  await expect(page.locator('#out')).toHaveText('Bye Ada', { timeout: 500 });
});
"""


def record_test_runner_traces(base: str, work: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """Both tests of SPEC run by `playwright test` (trace: 'on'); the second fails on purpose. Returns the
    output folder (one `<test>/trace.zip` per test) and the finished process."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    (work / "playwright.config.js").write_text(CONFIG % {
        "viewport": json.dumps(VIEWPORT), "chromium": json.dumps(CHROMIUM), "args": json.dumps(CHROMIUM_ARGS)})
    (work / "greeter.spec.js").write_text(SPEC)
    out = work / "test-results"
    env = {**os.environ, "BASE_URL": base, "OUT_DIR": str(out), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
           "FORCE_COLOR": "0"}
    process = subprocess.run(["node", str(NODE_MODULES / "@playwright" / "test" / "cli.js"), "test",
                              "--config", str(work / "playwright.config.js")],
                             cwd=work, env=env, capture_output=True, text=True, timeout=300)
    return out, process
