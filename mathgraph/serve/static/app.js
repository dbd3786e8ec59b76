// The page of `mathgraph serve`: a problem in, its graph (Cytoscape.js, laid out and coloured as
// mathgraph.draw lays out and colours it), the predictions of the tasks that read one problem, and the
// index's most similar problems, each with the QRC relation the model sees between it and the problem.
// The Compare view: two problems in, shown side by side with their alignment (parsers.compare) marked,
// the differences in words and the QRC relation the model predicts for the pair. The Check view: a problem
// and a worked solution in, the solution's lines with the lines that have findings marked (the first error
// most), and the findings of parsers.solution.check_solution listed by line with their severity.
"use strict";

const EXAMPLES = [
  "What is the sum of the roots of $x^2-5x+6=0$?",
  "In $\\triangle PQR,$ the sum of $\\angle P$ and $\\angle Q$ is $60^\\circ.$ What is the measure of $\\angle R?$",
  "A shop sells 3 pens for $2. How much do 12 pens cost?",
];
const KIND_NAMES = { root: "root", word: "word", math: "[MATH]", formula: "formula" };
const X_STEP = 70, Y_STEP = 60;  // pixels per leaf column and per level of mathgraph.draw's tree layout

const FISHIO = "Fishio posted her selfie on Instagram. She received 2000 likes on the photo after 1 week. Three " +
  "weeks later, the number of likes was 70 times as many as the initial number of likes. If she received 20000 " +
  "more new likes recently, how many Instagram likes are there?";
const COMPARE_EXAMPLES = [  // problem A, problem B (GSM-Plus perturbations of mathgraph/data/gsmplus_sample.jsonl)
  [FISHIO, FISHIO.replace("2000 likes", "20000 likes").replace("20000 more", "200000 more")],
  [FISHIO, FISHIO.replace("70 times", "70.5 times")],
  ["Tom has 3 apples. He buys 5 more apples. How many apples does he have now?",
   "Tom has three apples. He buys 12 more apples at the shop. His sister has 4 pears. " +
   "How many apples does he have now?"],
];

const NATALIA = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. " +
  "How many clips did Natalia sell altogether in April and May?";
const CHECK_EXAMPLES = [  // problem, solution: GSM8K train's first, then a miscopied number, a wrong sum
  [NATALIA, "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n" +
    "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72"],
  [NATALIA, "Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+42 = 90 clips altogether.\n#### 90"],
  ["Tom has 3 apples and 2 pears. He buys 5 more apples. How many apples does he have now?",
   "He buys 5 more apples.\nHe has 3 + 5 = 9 apples now.\n#### 9"],
];
const VIEWS = ["analyse", "compare", "check"];

const page = { health: null, cy: null, text: "", comparison: null, check: null };  // window.mathgraphPage: the tests read it
window.mathgraphPage = page;

const $ = (id) => document.getElementById(id);

function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.textContent = text;  // never innerHTML: problems and index rows are untrusted text
  return node;
}

// A failed request's detail as one line: a string, or FastAPI's list of {loc, msg}.
function describe(detail, status) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d) => `${d.loc.slice(1).join(".")}: ${d.msg}`).join("; ");
  return `the server answered ${status}`;
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(describe(data.detail, response.status));
  return data;
}

function showError(message, box = "error") {
  $(box).hidden = !message;
  $(box).textContent = message || "";
}

function tasksReading(input) {
  return page.health ? page.health.tasks.filter((t) => t.input === input).map((t) => t.name) : [];
}

// ---------------------------------------------------------------- the graph
function showSource(text, span) {
  const source = $("source");
  source.replaceChildren();
  if (!span) { source.textContent = text; return; }
  source.append(text.slice(0, span[0]), element("mark", {}, text.slice(span[0], span[1])), text.slice(span[1]));
}

function drawGraph(layout) {
  const elements = [
    ...layout.nodes.map((n) => ({ group: "nodes", data: { id: String(n.id), label: n.label, kind: n.kind,
      colour: n.colour, span: n.span || null }, position: { x: n.x * X_STEP, y: -n.y * Y_STEP } })),
    ...layout.edges.map((e) => ({ group: "edges", data: { id: `e${e.src}-${e.dst}`, source: String(e.src),
      target: String(e.dst), relation: e.relation.split(":").pop() } })),
  ];
  if (page.cy) page.cy.destroy();
  page.cy = cytoscape({
    container: $("graph"), elements, layout: { name: "preset", padding: 20 },
    minZoom: 0.1, maxZoom: 4, wheelSensitivity: 0.3, boxSelectionEnabled: false, autoungrabify: true,
    style: [
      { selector: "node", style: { "shape": "round-rectangle", "background-color": "data(colour)",
        "border-width": 1, "border-color": "#333", "label": "data(label)", "font-size": 11,
        "text-valign": "center", "text-halign": "center", "width": "label", "height": 18, "padding": "5px" } },
      { selector: "node.hovered", style: { "border-width": 3, "border-color": "#e09f00" } },
      { selector: "edge", style: { "width": 1, "line-color": "#777", "target-arrow-color": "#777",
        "target-arrow-shape": "triangle", "arrow-scale": 0.7, "curve-style": "straight", "label": "data(relation)",
        "font-size": 8, "color": "#333", "text-background-color": "#fff", "text-background-opacity": 0.8,
        "min-zoomed-font-size": 7 } },
    ],
  });
  page.cy.on("mouseover", "node", (event) => {
    event.target.addClass("hovered");
    showSource(page.text, event.target.data("span"));
  });
  page.cy.on("mouseout", "node", (event) => {
    event.target.removeClass("hovered");
    showSource(page.text, null);
  });
  $("graph").dataset.nodeCount = String(layout.nodes.length);
}

function drawLegend(layout) {
  const colours = {};
  for (const node of layout.nodes) if (!(node.kind in colours)) colours[node.kind] = node.colour;
  $("legend").replaceChildren(...Object.keys(KIND_NAMES).filter((k) => k in colours).map((kind) => {
    const swatch = element("span", { class: "swatch" }, KIND_NAMES[kind]);
    swatch.style.background = colours[kind];
    return swatch;
  }));
}

// ---------------------------------------------------------------- predictions and similar problems
function probabilityBars(probabilities, top = 5) {
  return Object.entries(probabilities).sort((a, b) => b[1] - a[1]).slice(0, top).map(([label, p]) => {
    const bar = element("div", { class: "bar" });
    const fill = element("div", { class: "fill" });
    fill.style.width = `${(100 * p).toFixed(1)}%`;
    const track = element("div");
    track.append(fill);
    bar.append(element("span", {}, label), track, element("span", { class: "value" }, p.toFixed(3)));
    return bar;
  });
}

async function showPredictions(text) {
  const tasks = tasksReading("single");
  const box = $("predictions");
  if (!tasks.length) { box.replaceChildren(element("p", { class: "muted" }, "This model has no task that reads one problem.")); return; }
  const answers = await Promise.all(tasks.map((task) => api(`/api/predict/${task}`, { inputs: [text] })));
  box.replaceChildren(...answers.map(({ task, results: [result] }) => {
    const block = element("div", { class: "task", "data-task": task });
    const heading = element("h3", {}, `${task.toUpperCase()}: `);
    heading.append(element("span", { class: "label" }, result.label));
    block.append(heading, ...probabilityBars(result.probabilities));
    return block;
  }));
}

async function showSimilar(text) {
  const list = $("similar");
  if (!page.health || !page.health.index) {
    list.replaceChildren(element("li", { class: "muted" }, "No index loaded (start the server with --index DIR)."));
    return;
  }
  const { results: [{ hits }] } = await api("/api/search", { queries: [text], k: 5 });
  const field = page.health.index.text_field;
  const relations = tasksReading("pair").includes("qrc") && hits.length
    ? (await api("/api/predict/qrc", { inputs: hits.map((h) => ({ text_a: text, text_b: String(h.row[field]) })) })).results
    : [];
  list.replaceChildren(...hits.map((hit, i) => {
    const item = element("li");
    // the cosine to the query (a hybrid search ranks by a fused score, which is no cosine: docs/search.md)
    const cosine = hit.cosine ?? hit.score;
    item.append(element("span", { class: "score", title: "cosine to the problem" }, `${cosine.toFixed(3)}  `), String(hit.row[field]));
    if (relations[i]) {
      const p = relations[i].probabilities[relations[i].label];
      item.append(element("div", { class: "relation" }, `QRC relation: ${relations[i].label} (${p.toFixed(3)})`));
    }
    return item;
  }));
}

// ---------------------------------------------------------------- the compare view
const OTHER_SIDE = { a: "b", b: "a" };

// Python's spans count code points, JavaScript strings UTF-16 units: slice the text as code points.
function codePoints(text) {
  const points = Array.from(text);
  return (start, end) => points.slice(start, end).join("");
}

// What hovering a quantity says: its kind and value, and the quantity of the other problem it is matched with.
function quantityTitle(match, side) {
  const own = match[side], other = match[OTHER_SIDE[side]];
  const parts = [`${match.kind}: ${own.text} = ${own.value}`,
    other ? `matched with ${other.text} = ${other.value} in ${OTHER_SIDE[side].toUpperCase()}`
          : `no match in ${OTHER_SIDE[side].toUpperCase()}`];
  if (match.form_change) parts.push(match.form_change);
  return parts.join("; ");
}

// One problem as nodes: each sentence (by the alignment's spans) coloured by its kind, each quantity marked.
function alignedText(text, alignment, side) {
  const slice = codePoints(text);
  const kinds = [];
  for (const match of alignment.sentences) if (match[side] !== null) kinds[match[side]] = match.kind;
  const quantities = alignment.quantities.map((match, i) => ({ match, i })).filter(({ match }) => match[side])
    .sort((x, y) => x.match[side].span[0] - y.match[side].span[0]);
  const marked = (start, end) => {  // the text of [start, end) with the quantities inside it marked
    const nodes = [];
    let at = start;
    for (const { match, i } of quantities) {
      const [from, to] = match[side].span;
      if (from < at || to > end) continue;  // outside this stretch, or overlapping a quantity already marked
      nodes.push(slice(at, from), element("mark", { class: `quantity q-${match.kind}`, "data-kind": match.kind,
        "data-match": String(i), title: quantityTitle(match, side) }, slice(from, to)));
      at = to;
    }
    nodes.push(slice(at, end));
    return nodes.filter((node) => node !== "");
  };
  const nodes = [];
  let at = 0;
  alignment[`sentence_spans_${side}`].forEach(([start, end], index) => {
    if (start < at) return;
    const kind = kinds[index] || "kept";
    const sentence = element("span", { class: `sentence s-${kind}`, "data-kind": kind });
    sentence.append(...marked(start, end));
    nodes.push(...marked(at, start), sentence);
    at = end;
  });
  nodes.push(...marked(at, Array.from(text).length));
  return nodes;
}

function showRelation(relation) {
  const box = $("relation");
  if (!relation) {
    box.replaceChildren(element("p", { class: "muted" }, "This model does not predict QRC relations."));
    return;
  }
  const block = element("div", { class: "task", "data-task": "qrc" });
  const heading = element("h3", {}, "QRC: ");
  heading.append(element("span", { class: "label" }, relation.label),
    element("span", { class: "muted" }, ` (${relation.probabilities[relation.label].toFixed(3)})`));
  block.append(heading, ...probabilityBars(relation.probabilities));
  box.replaceChildren(block);
}

async function compare() {
  const textA = $("problem-a").value, textB = $("problem-b").value;
  if (!textA.trim() || !textB.trim()) { showError("Type or paste both problems first.", "compare-error"); return; }
  showError("", "compare-error");
  $("compare").disabled = true;
  try {
    const { results: [result] } = await api("/api/compare", { pairs: [{ text_a: textA, text_b: textB }] });
    page.comparison = result;
    $("aligned-a").replaceChildren(...alignedText(textA, result.alignment, "a"));
    $("aligned-b").replaceChildren(...alignedText(textB, result.alignment, "b"));
    $("differences").textContent = result.alignment.explanation;
    $("differences").classList.remove("muted");
    showRelation(result.relation);
  } catch (error) {
    showError(error.message, "compare-error");
  } finally {
    $("compare").disabled = false;
  }
}

// Hovering a quantity also marks the one it is matched with in the other problem.
function markPartners(event, on) {
  const match = event.target.closest && event.target.closest("mark.quantity[data-match]");
  if (!match) return;
  for (const partner of document.querySelectorAll(`#aligned-panel mark[data-match="${match.dataset.match}"]`)) {
    partner.classList.toggle("partner", on);
  }
}

// ---------------------------------------------------------------- the check view
// Where a finding is: "line N" (counted from 1, as the list of lines shows them) or "the problem".
function findingPlace(finding) {
  return finding.step === null ? "the problem" : `line ${finding.step + 1}`;
}

// The solution's lines (split as the library splits them, at "\n"), each marked by its worst finding.
function solutionLines(solution, check) {
  const worst = new Map();
  for (const finding of check.findings) {
    if (finding.step === null || worst.get(finding.step) === "error") continue;
    worst.set(finding.step, finding.severity);
  }
  return solution.split("\n").map((line, step) => {
    const item = element("li", { class: "line", "data-step": String(step) }, line || "\u00a0");
    if (worst.has(step)) {
      item.classList.add(`line-${worst.get(step)}`);
      item.title = check.findings.filter((f) => f.step === step).map((f) => `${f.severity}: ${f.message}`).join("\n");
    }
    if (step === check.first_error_step) item.classList.add("first-error");
    return item;
  });
}

function findingsList(check) {
  if (!check.findings.length) return [element("li", { class: "muted" }, "Nothing to report.")];
  return check.findings.map((finding) => {
    const item = element("li", { class: `finding finding-${finding.severity}`, "data-severity": finding.severity,
      "data-step": finding.step === null ? "" : String(finding.step) });
    item.append(element("span", { class: "place" }, findingPlace(finding)), " ",
      element("span", { class: "severity" }, finding.severity), " ",
      element("span", { class: "kind" }, finding.kind.replace(/_/g, " ")), ": ",
      element("span", { class: "message" }, finding.message));
    return item;
  });
}

function verdict(check) {
  const count = (severity) => check.findings.filter((f) => f.severity === severity).length;
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (check.ok) {
    const warnings = count("warning");
    return `No errors found${warnings ? ` (${plural(warnings, "warning")})` : ""}.`;
  }
  const first = check.first_error_step === null ? "" : `; the first error is on line ${check.first_error_step + 1}`;
  return `${plural(count("error"), "error")}, ${plural(count("warning"), "warning")}${first}.`;
}

async function checkSolution() {
  const problem = $("check-problem").value, solution = $("check-solution").value;
  if (!problem.trim() || !solution.trim()) {
    showError("Type or paste the problem and its solution first.", "check-error");
    return;
  }
  showError("", "check-error");
  $("check").disabled = true;
  try {
    const check = await api("/api/check", { problem, solution });
    page.check = check;
    $("verdict").textContent = verdict(check);
    $("verdict").className = check.ok ? "verdict-ok" : "verdict-error";
    $("solution-lines").replaceChildren(...solutionLines(solution, check));
    $("findings").replaceChildren(...findingsList(check));
  } catch (error) {
    showError(error.message, "check-error");
  } finally {
    $("check").disabled = false;
  }
}

function showView(name) {
  for (const view of VIEWS) {
    $(`${view}-view`).hidden = view !== name;
    $(`tab-${view}`).setAttribute("aria-selected", String(view === name));
  }
  history.replaceState(null, "", name === "analyse" ? location.pathname : `#${name}`);
  if (name === "analyse" && page.cy) page.cy.resize();  // its container had no size while hidden
}

// ---------------------------------------------------------------- the flow
async function analyse() {
  const text = $("problem").value;
  if (!text.trim()) { showError("Type or paste a problem first."); return; }
  showError("");
  $("analyse").disabled = true;
  try {
    const { graphs: [graph], layouts: [layout] } = await api("/api/parse", { texts: [text], layout: true });
    page.text = graph.text;
    showSource(page.text, null);
    drawGraph(layout);
    drawLegend(layout);
    const panels = await Promise.allSettled([showPredictions(text), showSimilar(text)]);
    const failed = panels.find((p) => p.status === "rejected");
    if (failed) showError(failed.reason.message);
  } catch (error) {
    showError(error.message);
  } finally {
    $("analyse").disabled = false;
  }
}

async function start() {
  $("analyse").addEventListener("click", analyse);
  $("problem").addEventListener("keydown", (event) => { if (event.key === "Enter" && event.ctrlKey) analyse(); });
  $("fit").addEventListener("click", () => page.cy && page.cy.fit(undefined, 20));
  $("examples").append(...EXAMPLES.map((example, i) => {
    const button = element("button", { type: "button", title: example }, `example ${i + 1}`);
    button.addEventListener("click", () => { $("problem").value = example; analyse(); });
    return button;
  }));
  for (const view of VIEWS) $(`tab-${view}`).addEventListener("click", () => showView(view));
  $("compare").addEventListener("click", compare);
  for (const box of ["problem-a", "problem-b"]) {
    $(box).addEventListener("keydown", (event) => { if (event.key === "Enter" && event.ctrlKey) compare(); });
  }
  $("compare-examples").append(...COMPARE_EXAMPLES.map(([a, b], i) => {
    const button = element("button", { type: "button", title: `A: ${a}\nB: ${b}` }, `example ${i + 1}`);
    button.addEventListener("click", () => { $("problem-a").value = a; $("problem-b").value = b; compare(); });
    return button;
  }));
  $("aligned-panel").addEventListener("mouseover", (event) => markPartners(event, true));
  $("aligned-panel").addEventListener("mouseout", (event) => markPartners(event, false));
  $("check").addEventListener("click", checkSolution);
  for (const box of ["check-problem", "check-solution"]) {
    $(box).addEventListener("keydown", (event) => { if (event.key === "Enter" && event.ctrlKey) checkSolution(); });
  }
  $("check-examples").append(...CHECK_EXAMPLES.map(([problem, solution], i) => {
    const button = element("button", { type: "button", title: `${problem}\n\n${solution}` }, `example ${i + 1}`);
    button.addEventListener("click", () => {
      $("check-problem").value = problem;
      $("check-solution").value = solution;
      checkSolution();
    });
    return button;
  }));
  // a view's address (/#compare, /#check) opens it, on load and when only the hash changes
  const viewOfHash = () => VIEWS.find((view) => location.hash === `#${view}`);
  window.addEventListener("hashchange", () => showView(viewOfHash() || "analyse"));
  if (viewOfHash()) showView(viewOfHash());
  try {
    page.health = await api("/api/health");
    const index = page.health.index ? `, index of ${page.health.index.rows} problems` : ", no index";
    $("server-status").textContent =
      `${page.health.model} model (${page.health.tasks.map((t) => t.name).join(", ")})${index}`;
  } catch (error) {
    $("server-status").textContent = "server unreachable";
    showError(error.message);
  }
}

start();
