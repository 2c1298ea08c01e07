"""Opening an animation page in a headless Chromium (Selenium + the system
chromium and chromedriver, Debian packages ``chromium chromium-driver``): used by
tests/test_animate_browser.py and to make the screenshot in docs/animate.md.

    python -m manetlab.animate.browser PAGE.html OUT.png [--at S] [--node N] [--speed X]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

__all__ = ["chromium_paths", "open_page", "Page"]


def chromium_paths() -> tuple[str, str] | None:
    """(browser, driver) found on PATH, or None."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


class Page:
    """A page opened in headless Chromium; `state()` is ``window.manetlab.state()``."""

    def __init__(self, driver: Any, load_s: float) -> None:
        self.driver = driver
        self.load_s = load_s

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.js("return window.manetlab.state()")
        return state

    def console_errors(self) -> list[dict[str, Any]]:
        return [e for e in self.driver.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]

    def csp_violations(self) -> list[dict[str, Any]]:
        """Every Content-Security-Policy violation the page reported so far (also
        Trusted Types ones: an HTML string given to innerHTML), as
        ``{"directive", "blocked", "sample"}``; recorded from before the page's first script."""
        violations: list[dict[str, Any]] = self.js("return window.__cspViolations || []")
        return violations

    def requests(self) -> list[str]:
        """URLs the page asked for (the page itself included), from the DevTools log."""
        urls = []
        for e in self.driver.get_log("performance"):
            m = json.loads(e["message"])["message"]
            if m["method"] == "Network.requestWillBeSent":
                urls.append(m["params"]["request"]["url"])
        return urls

    def screenshot(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(p))
        return p

    def close(self) -> None:
        self.driver.quit()


# Run before any script of each page (DevTools, so outside the page's CSP): records
# the page's CSP violations for `Page.csp_violations`.
_RECORD_CSP = """window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push({directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample});
});"""

#: `open_page`'s default readiness test: the animation's script has run.
ANIMATION_READY = "window.manetlab && window.manetlab.ready"


def open_page(path: str | Path, width: int = 1400, height: int = 1000, ready: str = ANIMATION_READY) -> Page:
    """Open the page file `path`; returns once the JavaScript expression `ready` is
    true (default: ``window.manetlab`` is ready; ``"document.readyState === 'complete'"``
    for a page without script)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = chromium_paths()
    if found is None:
        raise RuntimeError("no chromium and chromedriver on PATH (apt-get install chromium chromium-driver)")
    browser, driver_path = found
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}", "--hide-scrollbars"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        t0 = time.monotonic()
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _RECORD_CSP})
        driver.get(Path(path).resolve().as_uri())
        deadline = t0 + 60
        while not driver.execute_script(f"return !!({ready})"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{path}: {ready} not true after 60 s")
            time.sleep(0.02)
        return Page(driver, time.monotonic() - t0)
    except BaseException:
        driver.quit()
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m manetlab.animate.browser", description="screenshot an animation page at a time")
    ap.add_argument("page", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--at", type=float, default=None, help="simulated time to show (s)")
    ap.add_argument("--node", type=int, default=None, help="node to select (its panel is shown)")
    ap.add_argument("--speed", type=float, default=1.0, help="playback speed (sets the flash and marker windows)")
    ap.add_argument("--ranges", action="store_true", help="show the reception range")
    a = ap.parse_args(argv)
    page = open_page(a.page)
    try:
        page.js("manetlab.setSpeed(arguments[0])", a.speed)
        if a.ranges:
            page.js("document.getElementById('rng').click()")
        if a.node is not None:
            page.js("manetlab.selectNode(arguments[0])", a.node)
        if a.at is not None:
            page.js("manetlab.seek(arguments[0])", a.at)
        page.screenshot(a.out)
        print(f"opened in {page.load_s:.2f} s; wrote {a.out}")
        for e in page.console_errors():
            print(f"console: {e}")
    finally:
        page.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
