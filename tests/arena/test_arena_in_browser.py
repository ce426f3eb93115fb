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


@pytest.mark.subprocess  # the arena's server as its own process, a browser on it
def test_the_rater_flow_clears_the_name_prompt_counts_progress_and_undoes_the_last_vote(arena_sweep):
    """Start without a name asks for one; once started the prompt is gone and the rater's progress
    shows (pairs judged of the pool's); 'u' takes the last vote back (the file holds none) and shows
    the same pair again, and the vote cast then is the one kept."""
    driver = browser.chrome()
    port = server.free_port()
    proc = server.start(arena_sweep, port)
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        driver.get(f"http://127.0.0.1:{port}/")
        text = lambda element: driver.find_element(By.ID, element).text  # noqa: E731
        body = driver.find_element(By.TAG_NAME, "body")
        driver.find_element(By.ID, "start").click()
        assert _wait(lambda: text("status")) == "enter your name first"
        driver.find_element(By.ID, "rater").send_keys("careful rater", Keys.ENTER)
        first = _wait(lambda: body.get_attribute("data-pair"))
        _wait(lambda: text("progress"))
        assert text("status") == ""  # the prompt is gone once started
        total = int(text("progress").split(" of ")[1].split()[0])
        assert text("progress") == f"you: 0 of {total} pairs judged" and total == 3 * 10  # 3 model pairs × 10 samples
        sample = text("sample").split(",")[0]
        assert not driver.find_element(By.ID, "undo").is_displayed()

        _wait(lambda: driver.execute_script("return document.getElementById('left').width > 0"))
        body.send_keys("a")
        _wait(lambda: body.get_attribute("data-votes") == "1" and body.get_attribute("data-judged") == "1")
        assert text("progress") == f"you: 1 of {total} pairs judged"
        assert [v.vote_id for v in read_votes(arena_sweep / "arena.sqlite")] == [first]
        assert driver.find_element(By.ID, "undo").is_displayed()

        body.send_keys("u")
        _wait(lambda: body.get_attribute("data-votes") == "0" and body.get_attribute("data-judged") == "0")
        assert read_votes(arena_sweep / "arena.sqlite") == []
        assert text("status").startswith("vote taken back (0 votes)")
        assert _wait(lambda: text("sample").split(",")[0]) == sample  # the same pair, to judge again

        again = body.get_attribute("data-pair")
        _wait(lambda: driver.execute_script("return document.getElementById('left').width > 0"))
        body.send_keys("b")
        _wait(lambda: body.get_attribute("data-votes") == "1")
        [vote] = read_votes(arena_sweep / "arena.sqlite")
        assert (vote.vote_id, vote.choice, vote.rater) == (again, "b", "careful rater")
        assert vote.sample_id == sample.removeprefix("sample ").split(" (")[0]
        severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert severe == []
    finally:
        driver.quit()
        proc.kill()
        proc.wait(timeout=10)
