"""Open every page of the built site in headless Chromium and fail on any page that logs a
console error, throws (its web workers included), has a request fail, or asks for anything
outside the site.

    python tools/check_pages.py [SITE_DIR] [--chromium PATH]   # SITE_DIR: site (mkdocs build)
    python tools/check_pages.py --self-test                    # shows that it catches errors

The site is served over HTTP on 127.0.0.1 (Material's search runs in a web worker, which
file:// pages may not start). Chromium is driven with Playwright's Python package, which
uses the given browser (Debian's /usr/bin/chromium) and downloads none. The pages must need
no network: a request to any other origin is aborted and reported. Exit status 1 lists the
pages with errors.
"""

import argparse
import functools
import http.server
import pathlib
import sys
import tempfile
import threading
import time

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(root):
    """An HTTP server for ``root`` on a free port of 127.0.0.1, in a daemon thread."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def page_paths(site):
    """Every HTML page of the site, as URL paths (``index.html`` kept: no redirect needed)."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def _settle(page, pending, errors, quiet_ms=100, limit_s=20):
    """Wait until what the page started after its load event (the search worker fetching the
    index) has finished: no request in flight for ``quiet_ms``. Playwright's "networkidle"
    waits 500 ms per page for the same."""
    deadline = time.monotonic() + limit_s
    quiet = 0
    while quiet < quiet_ms:
        page.wait_for_timeout(25)
        quiet = 0 if pending else quiet + 25
        if time.monotonic() > deadline:
            errors.append(f"still loading after {limit_s} s: {sorted(r.url for r in pending)}")
            return


def check_site(site, chromium="/usr/bin/chromium", pages=None):
    """{page path: [error, ...]} for the pages of ``site`` that have errors."""
    from playwright.sync_api import sync_playwright  # the docs extra's; not needed to import

    site = pathlib.Path(site)
    server = _serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = {}
    try:
        with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
            # a new empty profile per run (Playwright's user_data_dir is --user-data-dir)
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
            errors = []

            def outside(route):
                errors.append(f"request outside the site (aborted): {route.request.url}")
                route.abort()

            context.route(lambda url: not url.startswith((base, "data:", "blob:")), outside)
            page = context.pages[0] if context.pages else context.new_page()
            pending = set()  # requests in flight, the page's web workers' included
            page.on("request", lambda r: pending.add(r))
            page.on("requestfinished", lambda r: pending.discard(r))
            page.on("requestfailed", lambda r: pending.discard(r))
            page.on("console", lambda m: m.type == "error" and errors.append(
                f"console error: {m.text} ({m.location.get('url', '')})"))
            page.on("pageerror", lambda e: errors.append(f"uncaught exception: {e}"))
            page.on("requestfailed", lambda r: errors.append(
                f"request failed: {r.url} ({r.failure})"))
            page.on("response", lambda r: r.status >= 400 and errors.append(
                f"HTTP {r.status}: {r.url}"))
            for path in pages if pages is not None else page_paths(site):
                errors.clear()
                page.goto(base + path, wait_until="load")
                _settle(page, pending, errors)
                if errors:
                    problems[path] = sorted(set(errors))
            context.close()
    finally:
        server.shutdown()
    return problems


def self_test(chromium):
    """A site of four pages: one clean, one with a script error, one with a missing image, one
    that loads a web font from the network. True when exactly the three bad ones are reported."""
    with tempfile.TemporaryDirectory() as tmp:
        site = pathlib.Path(tmp)
        (site / "good.html").write_text("<html><body><p>fine</p><script>console.log('ok')"
                                        "</script></body></html>")
        (site / "js_error.html").write_text("<html><body><script>notDefinedAnywhere()</script>"
                                            "</body></html>")
        (site / "missing_file.html").write_text("<html><body><img src='missing.png'>"
                                                "</body></html>")
        (site / "web_font.html").write_text(
            "<html><head><link rel='stylesheet' href='https://fonts.googleapis.com/css?"
            "family=Roboto'></head><body>text</body></html>")
        problems = check_site(site, chromium)
    for path, errors in problems.items():
        print(f"{path}: {errors}")
    ok = sorted(problems) == ["js_error.html", "missing_file.html", "web_font.html"]
    print("self-test:", "the three bad pages were caught" if ok else "FAILED")
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", default="site", help="built site (default: site)")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="browser executable")
    parser.add_argument("--self-test", action="store_true",
                        help="check that pages with a JS error, a missing file or a web font fail")
    args = parser.parse_args(argv)
    if args.self_test:
        return 0 if self_test(args.chromium) else 1
    site = pathlib.Path(args.site)
    if not (site / "index.html").is_file():
        print(f"{site}/index.html not found: build the site first (mkdocs build)")
        return 2
    started = time.perf_counter()
    paths = page_paths(site)
    problems = check_site(site, args.chromium, paths)
    for path, errors in problems.items():
        print(f"FAIL {path}")
        for error in errors:
            print(f"    {error}")
    print(f"{len(paths)} pages checked in {time.perf_counter() - started:.1f} s, "
          f"{len(problems)} with errors")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
