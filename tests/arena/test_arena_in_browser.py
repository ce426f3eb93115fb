"""The arena's pages driven in headless Chromium: a rater types a name, votes with the keyboard
(a, b, t, x), the votes are in SQLite, and the ratings page shows them."""

from __future__ import annotations

import time

import pytest

from tests.arena import browser, server
from wfeval.storage.votes import read_votes


def _wait(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting in the browser")


@pytest.mark.subprocess  # the arena's server as its own process, a browser on it
def test_votes_cast_with_the_keyboard_are_stored_and_rated(arena_sweep):
    driver = browser.chrome()
    port = server.free_port()
    proc = server.start(arena_sweep, port)
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        driver.get(f"http://127.0.0.1:{port}/")
        driver.find_element(By.ID, "rater").send_keys("keyboard rater", Keys.ENTER)
        body = driver.find_element(By.TAG_NAME, "body")
        pairs = []
        for n, key in enumerate("abtx", 1):
            pair = _wait(lambda: body.get_attribute("data-pair") not in (None, *pairs) and body.get_attribute("data-pair"))
            pairs.append(pair)
            _wait(lambda: driver.execute_script("return document.getElementById('left').width > 0"))
            body.send_keys(key)
            _wait(lambda: body.get_attribute("data-votes") == str(n))
        votes = read_votes(arena_sweep / "arena.sqlite")
        assert [v.choice for v in votes] == ["a", "b", "tie", "both_bad"]
        assert [v.vote_id for v in votes] == pairs and {v.rater for v in votes} == {"keyboard rater"}
        # the pictures were drawn: the left canvas holds the sprite's first frame, not a blank
        assert driver.execute_script("var c=document.getElementById('left');"
                                     "return c.getContext('2d').getImageData(0,0,c.width,c.height).data.some(x=>x>0)")
        driver.get(f"http://127.0.0.1:{port}/ratings")
        table = driver.find_element(By.ID, "ratings").text
        assert all(name in table for name in {v.model_a for v in votes} | {v.model_b for v in votes})
        assert "4 votes by 1 rater" in driver.find_element(By.TAG_NAME, "body").text
        assert driver.find_element(By.ID, "agreement").text.count("gridworld.") >= 3
        severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert severe == []
    finally:
        driver.quit()
        proc.kill()
        proc.wait(timeout=10)
