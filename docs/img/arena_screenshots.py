"""Retake docs/img/arena-vote.png and docs/img/arena-ratings.png (docs/arena.md).

Run from the repository root: ``PYTHONPATH=. .venv/bin/python docs/img/arena_screenshots.py``. It
makes a 3-model gridworld sweep (oracle, noisy, static; 10 samples) in a temporary folder, casts
30 votes by the simulated rater and 30 by a noisier one, serves the arena on 127.0.0.1 and takes
both pages in headless Chromium (tests/arena/browser.py: Debian's chromium and chromedriver).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.arena import browser, server  # noqa: E402
from tests.conftest import cli_env, run_cli  # noqa: E402


def main() -> int:
    import faulthandler

    faulthandler.dump_traceback_later(80, exit=True)
    with tempfile.TemporaryDirectory(prefix="wfeval-arena-shots-") as folder:
        root = Path(folder)
        made = run_cli(["-m", "model=oracle,noisy,static", "benchmark.num_samples=10", "run.progress=off",
                        "run.report=false", f"run.store_dir={root / 'store'}"], cwd=root)
        if made.returncode != 0:
            print(made.stderr, file=sys.stderr)
            return 1
        [sweep] = (root / "outputs" / "multirun").iterdir()
        for rater, noise in (("simulated", "0.1"), ("simulated-noisy", "0.4")):
            subprocess.run([sys.executable, "-m", "wfeval.arena", str(sweep), "--simulate", "30", "--noise", noise,
                            "--rater", rater], env=cli_env(), check=True, cwd=root)
        port = server.free_port()
        proc = server.start(sweep, port)
        driver = browser.chrome(1100, 880)
        try:
            from selenium.webdriver.common.by import By
            from selenium.webdriver.common.keys import Keys

            driver.get(f"http://127.0.0.1:{port}/")
            driver.find_element(By.ID, "rater").send_keys("you", Keys.ENTER)
            deadline = time.monotonic() + 30
            while not driver.execute_script("return document.getElementById('left').width > 0"):
                if time.monotonic() > deadline:
                    raise RuntimeError("the pair was not drawn")
                time.sleep(0.1)
            driver.find_element(By.TAG_NAME, "body").send_keys("r")  # show the reference beside the pair
            time.sleep(0.5)
            driver.save_screenshot(str(ROOT / "docs" / "img" / "arena-vote.png"))
            driver.get(f"http://127.0.0.1:{port}/ratings")
            driver.save_screenshot(str(ROOT / "docs" / "img" / "arena-ratings.png"))
        finally:
            driver.quit()
            proc.kill()
            proc.wait(timeout=10)
    print("wrote docs/img/arena-vote.png, docs/img/arena-ratings.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
