"""End to end: ``mathgraph serve`` started as a command on a free local port, its page driven in headless
Chromium (Selenium with Debian's chromium and chromedriver, which ``.ci/run`` installs): a problem typed in,
its graph drawn with every node, a prediction and the similar problems shown, a hovered node's span marked,
and a screenshot saved (to ``$MATHGRAPH_SCREENSHOT_DIR`` too, when set).

Skipped only where no Chromium or chromedriver is installed."""

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from parsers.problem import parse_problem

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
PROBLEM = "What is the sum of the roots of $x^2-5x+6=0$?"
MATH_SUBJECTS = {"Algebra", "Counting & Probability", "Geometry", "Intermediate Algebra", "Number Theory",
                 "Prealgebra", "Precalculus"}
START_TIMEOUT_S = 180


@pytest.fixture(scope="module")
def server_url(index_dir, tmp_path_factory):
    """``mathgraph serve --port 0`` (a free port, read from the line it prints once the models are loaded)."""
    log_path = tmp_path_factory.mktemp("server") / "serve.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen([sys.executable, "-m", "mathgraph.cli", "serve", "--index", str(index_dir),
                                    "--port", "0"], stdout=log, stderr=subprocess.STDOUT)
    try:
        url = _wait_for_url(process, log_path)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def _wait_for_url(process: subprocess.Popen, log_path: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"mathgraph serve exited with {process.returncode}:\n{log_path.read_text()}")
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", log_path.read_text())
        if found:
            try:
                urllib.request.urlopen(found[1] + "api/health", timeout=5).read()
                return found[1]
            except OSError:
                pass
        time.sleep(0.5)
    pytest.fail(f"mathgraph serve did not answer within {START_TIMEOUT_S} s:\n{log_path.read_text()}")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("no Chromium and chromedriver installed (Debian: apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # headless as root in a container; no background connections (this machine's network is closed)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--window-size=1400,1250",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=DriverService(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def test_the_page_draws_the_graph_predictions_and_similar_problems(server_url, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(server_url)
    wait.until(seen.text_to_be_present_in_element((By.ID, "server-status"), "index of 40 problems"))
    browser.find_element(By.ID, "problem").send_keys(PROBLEM)
    browser.find_element(By.ID, "analyse").click()

    expected = parse_problem(PROBLEM)
    graph = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "#graph[data-node-count]")))
    assert int(graph.get_attribute("data-node-count")) == len(expected.nodes)
    drawn = browser.execute_script("const cy = window.mathgraphPage.cy; return [cy.nodes().length, cy.edges().length];")
    assert drawn == [len(expected.nodes), len(expected.edges)]
    assert browser.find_element(By.ID, "graph").find_elements(By.TAG_NAME, "canvas")  # Cytoscape drew it

    label = wait.until(seen.visibility_of_element_located((By.CSS_SELECTOR, '.task[data-task="kpc"] .label')))
    assert label.text in MATH_SUBJECTS
    bars = browser.find_elements(By.CSS_SELECTOR, '.task[data-task="kpc"] .bar .value')
    assert len(bars) == 5 and all(0.0 <= float(bar.text) <= 1.0 for bar in bars)
    wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#similar li .relation")) == 5)
    assert browser.find_element(By.ID, "error").get_attribute("hidden") is not None  # no error shown

    math = next(node for node in expected.nodes if node.kind == "math")
    browser.execute_script(f"window.mathgraphPage.cy.$id('{math.id}').emit('mouseover');")
    assert browser.find_element(By.CSS_SELECTOR, "#source mark").text == PROBLEM[math.span[0]:math.span[1]]
    browser.execute_script(f"window.mathgraphPage.cy.$id('{math.id}').emit('mouseout');")
    assert not browser.find_elements(By.CSS_SELECTOR, "#source mark")

    browser.execute_script(f"window.mathgraphPage.cy.$id('{math.id}').emit('mouseover');")  # marked in the picture
    screenshot = tmp_path / "page.png"
    assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000
    if os.environ.get("MATHGRAPH_SCREENSHOT_DIR"):
        shutil.copy(screenshot, Path(os.environ["MATHGRAPH_SCREENSHOT_DIR"]) / "serve_page.png")


def test_the_page_shows_a_server_error_clearly(server_url, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server_url)
    WebDriverWait(browser, 30).until(seen.text_to_be_present_in_element((By.ID, "server-status"), "shipped"))
    browser.find_element(By.ID, "problem").send_keys("x" * 10_001)  # over the default --max-text-chars
    browser.find_element(By.ID, "analyse").click()
    error = WebDriverWait(browser, 30).until(seen.visibility_of_element_located((By.ID, "error")))
    assert "this server takes at most 10000" in error.text
