"""End to end: ``mathgraph serve`` started as a command on a free local port, its page driven in headless
Chromium (Selenium with Debian's chromium and chromedriver, which ``.ci/run`` installs): a problem typed in,
its graph drawn with every node, a prediction and the similar problems shown, a hovered node's span marked,
and a screenshot saved (to ``$MATHGRAPH_SCREENSHOT_DIR`` too, when set); in the Compare view, two problems
side by side with their aligned sentences and quantities marked, the differences and the QRC relation; in
the Check view, a problem and a solution with a wrong step: the findings listed by line with their severity
and the wrong line marked, as ``check_solution`` finds them.

Skipped only where no Chromium or chromedriver is installed."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from mathgraph.parsers.compare import align_problems
from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import check_solution

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
PROBLEM = "What is the sum of the roots of $x^2-5x+6=0$?"
MATH_SUBJECTS = {
    "Algebra",
    "Counting & Probability",
    "Geometry",
    "Intermediate Algebra",
    "Number Theory",
    "Prealgebra",
    "Precalculus",
}
START_TIMEOUT_S = 180
COMPARE_A = "Tom has 3 apples. He buys 5 more apples. How many apples does he have now?"
COMPARE_B = (
    "Tom has three apples. He buys 12 more apples at the shop. His sister has 4 pears. "
    "How many apples does he have now?"
)

CHECK_PROBLEM = "Tom has 3 apples and 2 pears. He buys 5 more apples. How many apples does he have now?"
CHECK_SOLUTION = "He buys 5 more apples.\nHe has 3 + 5 = 9 apples now.\n#### 9"


@pytest.fixture(scope="module")
def server_url(index_dir, tmp_path_factory):
    """``mathgraph serve --port 0`` (a free port, read from the line it prints once the models are loaded)."""
    log_path = tmp_path_factory.mktemp("server") / "serve.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mathgraph.cli", "serve", "--index", str(index_dir), "--port", "0"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
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
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1400,1250",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
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
    assert browser.find_element(By.CSS_SELECTOR, "#source mark").text == PROBLEM[math.span[0] : math.span[1]]
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
    # one character over the default --max-text-chars: 10,000 set at once (typing them key by key took a
    # minute), the last one typed
    problem = browser.find_element(By.ID, "problem")
    browser.execute_script("arguments[0].value = arguments[1];", problem, "x" * 10_000)
    problem.send_keys("x")
    assert len(problem.get_attribute("value")) == 10_001
    browser.find_element(By.ID, "analyse").click()
    error = WebDriverWait(browser, 30).until(seen.visibility_of_element_located((By.ID, "error")))
    assert "this server takes at most 10000" in error.text


def test_the_compare_view_marks_the_alignment_and_shows_the_relation(server_url, browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(server_url)
    wait.until(seen.text_to_be_present_in_element((By.ID, "server-status"), "shipped"))
    assert not browser.find_element(By.ID, "compare-view").is_displayed()
    browser.find_element(By.ID, "tab-compare").click()
    assert browser.find_element(By.ID, "compare-view").is_displayed()
    assert not browser.find_element(By.ID, "analyse-view").is_displayed()
    browser.find_element(By.ID, "problem-a").send_keys(COMPARE_A)
    browser.find_element(By.ID, "problem-b").send_keys(COMPARE_B)
    browser.find_element(By.ID, "compare").click()
    label = wait.until(seen.visibility_of_element_located((By.CSS_SELECTOR, '#relation .task[data-task="qrc"] .label')))

    # each sentence coloured by its kind, each quantity marked with its kind, as the library aligns them
    expected = align_problems(parse_problem(COMPARE_A), parse_problem(COMPARE_B))
    for side, text, sentences in (("a", COMPARE_A, expected.sentences_a), ("b", COMPARE_B, expected.sentences_b)):
        assert browser.find_element(By.ID, f"aligned-{side}").text == text
        kinds = {getattr(m, side): m.kind for m in expected.sentences if getattr(m, side) is not None}
        shown = browser.find_elements(By.CSS_SELECTOR, f"#aligned-{side} .sentence")
        assert [(s.text, s.get_attribute("data-kind")) for s in shown] == [
            (sentence.text, kinds[i]) for i, sentence in enumerate(sentences)
        ]
        matches = sorted(
            (m for m in expected.quantities if getattr(m, side) is not None), key=lambda m: getattr(m, side).span[0]
        )
        shown = browser.find_elements(By.CSS_SELECTOR, f"#aligned-{side} mark.quantity")
        assert [(q.text, q.get_attribute("data-kind")) for q in shown] == [
            (getattr(m, side).text, m.kind) for m in matches
        ]
    assert {q.get_attribute("data-kind") for q in browser.find_elements(By.CSS_SELECTOR, "#aligned-b mark")} == {
        "same",
        "changed",
        "new",
    }
    assert browser.find_element(By.ID, "differences").text == expected.explain()

    # hovering a changed quantity says its value and its match, and marks the match in the other problem
    changed = next(m for m in expected.quantities if m.kind == "changed")
    mark = browser.find_element(By.CSS_SELECTOR, "#aligned-b mark.q-changed")
    assert mark.get_attribute("title") == (
        f"changed: {changed.b.text} = {changed.b.value}; matched with {changed.a.text} = {changed.a.value} in A"
    )
    ActionChains(browser).move_to_element(mark).perform()
    assert [m.text for m in browser.find_elements(By.CSS_SELECTOR, "mark.partner")] == [changed.a.text, changed.b.text]

    # the relation is the one /api/compare gives, its probability beside it and the top five as bars
    body = json.dumps({"pairs": [{"text_a": COMPARE_A, "text_b": COMPARE_B}]}).encode()
    request = urllib.request.Request(
        server_url + "api/compare", data=body, headers={"Content-Type": "application/json"}
    )
    relation = json.loads(urllib.request.urlopen(request, timeout=60).read())["results"][0]["relation"]
    assert label.text == relation["label"]
    assert (
        f"({relation['probabilities'][relation['label']]:.3f})"
        in browser.find_element(By.CSS_SELECTOR, "#relation h3").text
    )
    bars = browser.find_elements(By.CSS_SELECTOR, "#relation .bar .value")
    assert len(bars) == 5 and all(0.0 <= float(bar.text) <= 1.0 for bar in bars)
    assert browser.find_element(By.ID, "compare-error").get_attribute("hidden") is not None  # no error shown

    screenshot = tmp_path / "compare.png"
    assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000
    if os.environ.get("MATHGRAPH_SCREENSHOT_DIR"):
        shutil.copy(screenshot, Path(os.environ["MATHGRAPH_SCREENSHOT_DIR"]) / "serve_compare.png")

    # an empty problem is reported on the page; the Analyse tab brings the other view back
    browser.find_element(By.ID, "problem-b").clear()
    browser.find_element(By.ID, "compare").click()
    assert browser.find_element(By.ID, "compare-error").text == "Type or paste both problems first."
    browser.find_element(By.ID, "tab-analyse").click()
    assert browser.find_element(By.ID, "analyse-view").is_displayed()
    assert not browser.find_element(By.ID, "compare-view").is_displayed()


def test_the_check_view_lists_the_findings_and_marks_the_wrong_line(server_url, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(server_url + "#check")  # the view's own address opens it
    wait.until(seen.text_to_be_present_in_element((By.ID, "server-status"), "shipped"))
    assert browser.find_element(By.ID, "check-view").is_displayed()
    assert not browser.find_element(By.ID, "analyse-view").is_displayed()
    assert not browser.find_element(By.ID, "compare-view").is_displayed()
    browser.find_element(By.ID, "check-problem").send_keys(CHECK_PROBLEM)
    browser.find_element(By.ID, "check-solution").send_keys(CHECK_SOLUTION)  # typed "\n" starts a new line
    browser.find_element(By.ID, "check").click()
    wait.until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "#findings li.finding"))

    # by hand: 3 + 5 is not 9 on the second line, and the 2 pears are never used; the library agrees
    expected = check_solution(parse_problem(CHECK_PROBLEM), CHECK_SOLUTION)
    assert [(f.kind, f.severity, f.step) for f in expected.findings] == [
        ("arithmetic", "error", 1),
        ("unused_quantity", "warning", None),
    ]
    shown = browser.find_elements(By.CSS_SELECTOR, "#findings li.finding")
    assert [
        (
            item.find_element(By.CLASS_NAME, "place").text,
            item.get_attribute("data-severity"),
            item.find_element(By.CLASS_NAME, "message").text,
        )
        for item in shown
    ] == [("line 2", "error", expected.findings[0].message), ("the problem", "warning", expected.findings[1].message)]

    lines = browser.find_elements(By.CSS_SELECTOR, "#solution-lines li")
    assert [line.text for line in lines] == CHECK_SOLUTION.split("\n")
    assert [line.get_attribute("class").split() for line in lines] == [
        ["line"],
        ["line", "line-error", "first-error"],
        ["line"],
    ]
    assert lines[1].get_attribute("title") == f"error: {expected.findings[0].message}"
    assert browser.find_element(By.ID, "verdict").text == "1 error, 1 warning; the first error is on line 2."
    assert browser.find_element(By.ID, "check-error").get_attribute("hidden") is not None  # no error shown

    screenshot = tmp_path / "check.png"
    assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000
    if os.environ.get("MATHGRAPH_SCREENSHOT_DIR"):
        shutil.copy(screenshot, Path(os.environ["MATHGRAPH_SCREENSHOT_DIR"]) / "serve_check.png")

    # the first example is GSM8K's own solution: nothing marked; an empty solution is reported on the page
    browser.find_element(By.CSS_SELECTOR, "#check-examples button").click()
    wait.until(seen.text_to_be_present_in_element((By.ID, "verdict"), "No errors found"))
    assert not browser.find_elements(By.CSS_SELECTOR, "#solution-lines li.line-error")
    browser.find_element(By.ID, "check-solution").clear()
    browser.find_element(By.ID, "check").click()
    assert browser.find_element(By.ID, "check-error").text == "Type or paste the problem and its solution first."
