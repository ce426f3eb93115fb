"""Headless Chromium (Debian's ``chromium`` and ``chromedriver``) through Selenium, which uses the
installed browser and never downloads one. Under ``CI=true`` a missing browser fails the test."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage")


def _find(names: tuple[str, ...], what: str) -> str:
    for name in names:
        path = shutil.which(name) or (name if os.path.isfile(name) else None)
        if path:
            return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the arena's browser test: no {what} found (.ci/run installs chromium and "
                    "chromium-driver)")
    pytest.skip(f"no {what} on this machine (apt-get install chromium chromium-driver)")


def chrome(width: int = 1280, height: int = 900):
    """A fresh headless Chromium (its own profile folder); the caller quits it."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    browser = _find(("chromium", "chromium-browser", "/usr/bin/chromium"), "chromium")
    driver_path = _find(("chromedriver", "/usr/bin/chromedriver"), "chromedriver")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='wfeval-arena-chrome-')}")
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)
