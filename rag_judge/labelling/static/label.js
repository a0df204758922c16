// The labelling page: one row at a time, keyboard first. Every text of a row is untrusted and
// goes into the page with textContent, never as HTML.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  let state = null; // the server's answer to api/state
  let shown = null; // id of the row on screen
  let busy = false; // a request in flight: keys wait
  const claimLabels = new Map(); // claim position -> 1 or 0

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const number = (x) => (x === null || x === undefined ? "–" : x.toFixed(2));

  function showError(message) {
    $("error").textContent = message;
    $("error").hidden = !message;
  }

  async function call(path, body) {
    busy = true;
    document.body.classList.add("busy");
    try {
      const init = body === undefined ? {} : {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify(body),
      };
      const response = await fetch(path, init);
      const data = await response.json();
      if (!response.ok) {
        showError(data.error || response.statusText);
        if (data.state) render(data.state);
        return;
      }
      showError("");
      render(data);
    } catch (error) {
      showError("The server does not answer (" + error.message + "). Every label given is " +
        "saved: start rag-judge label again with the same -o and reload.");
    } finally {
      busy = false;
      document.body.classList.remove("busy");
    }
  }

  function render(next) {
    state = next;
    let progress = `${next.labelled} of ${next.total} labelled`;
    if (next.skipped) progress += `, ${next.skipped} skipped`;
    if (next.row) progress += ` · row ${next.position} of ${next.total}`;
    $("progress").textContent = progress;
    $("metric").textContent = `${next.metric} · ${next.annotator}`;
    document.title = `${next.labelled}/${next.total} · rag-judge label`;
    $("undo").disabled = !next.can_undo;
    for (const id of ["supported", "unsupported", "skip"]) $(id).disabled = !next.row;
    $("finished").hidden = Boolean(next.row);
    $("row").hidden = !next.row;
    $("labels-file").textContent = next.labels_file;
    $("next-command").textContent =
      `rag-judge calibrate --scores ${next.scores_file} --labels ${next.labels_file}`;
    if (!next.row) {
      shown = null;
      return;
    }
    if (next.row.id !== shown) {
      shown = next.row.id;
      claimLabels.clear();
      showRow(next.row);
      const back = next.taken_back; // a label just undone: its note and claim labels again
      $("note").value = back ? back.note : "";
      if (back) for (const claim of back.claims) setClaim(claim.claim, claim.label);
      if (document.activeElement && document.activeElement !== document.body) {
        document.activeElement.blur();
      }
    }
  }

  function showRow(row) {
    $("row-id").textContent = row.id;
    let judge = `judge: ${number(row.value)}`;
    if (row.status !== "ok") judge += ` (${row.status}${row.error ? ": " + row.error : ""})`;
    if (row.probability !== null) judge += ` · P(supported) ${number(row.probability)}`;
    $("judge").textContent = judge;
    $("question").textContent = row.question;
    $("answer").textContent = row.answer;
    showPassages(row);
    showClaims(row);
    $("left").scrollTop = 0;
    $("right").scrollTop = 0;
  }

  function showPassages(row) {
    const cited = new Map(); // passage number -> claim numbers citing it
    row.claims.forEach((claim, i) => {
      for (const chunk of claim.chunks) {
        if (!cited.has(chunk)) cited.set(chunk, []);
        cited.get(chunk).push(i + 1);
      }
    });
    const list = $("passages");
    list.replaceChildren();
    row.contexts.forEach((text, i) => {
      const item = el("li", cited.has(i + 1) ? "passage cited" : "passage");
      item.dataset.number = String(i + 1);
      const head = el("div", "passage-head", `Passage ${i + 1}`);
      if (cited.has(i + 1)) {
        head.append(el("span", "cite", `cited by claim ${cited.get(i + 1).join(", ")}`));
      }
      item.append(head, el("p", "text", text));
      list.append(item);
    });
    if (!row.contexts.length) list.append(el("li", "empty", "This row has no passages."));
  }

  function showClaims(row) {
    const list = $("claims");
    list.replaceChildren();
    row.claims.forEach((claim, i) => {
      const item = el("li", "claim");
      item.tabIndex = 0;
      item.dataset.index = String(i);
      const verdict = claim.verdict || "no verdict";
      const head = el("div", "claim-head");
      head.append(
        el("span", "claim-number", `${i + 1}`),
        el("span", `verdict ${verdict.replace(" ", "_")}`, verdict.replace("_", " ")),
        el("span", "probability", `P(supported) ${number(claim.support_probability)}`),
      );
      if (claim.chunks.length) head.append(el("span", "cites", `cites ${claim.chunks.join(", ")}`));
      const yes = el("button", "claim-yes", "✓ supported");
      const no = el("button", "claim-no", "✗ not");
      for (const [button, value] of [[yes, 1], [no, 0]]) {
        button.type = "button";
        button.tabIndex = -1;
        button.addEventListener("click", () => setClaim(i, value));
      }
      const buttons = el("span", "claim-buttons");
      buttons.append(yes, no);
      head.append(buttons);
      item.append(head, el("p", "claim-text", claim.claim));
      if (claim.reason) item.append(el("p", "reason", claim.reason));
      item.addEventListener("focus", () => highlight(claim.chunks));
      item.addEventListener("blur", () => highlight([]));
      list.append(item);
    });
    if (!row.claims.length) list.append(el("li", "empty", "The judge gave no claims."));
  }

  function highlight(chunks) {
    for (const item of document.querySelectorAll("#passages li.passage")) {
      const on = chunks.includes(Number(item.dataset.number));
      item.classList.toggle("focused", on);
      if (on && chunks[0] === Number(item.dataset.number)) item.scrollIntoView({block: "nearest"});
    }
  }

  function setClaim(index, value) {
    if (claimLabels.get(index) === value) claimLabels.delete(index);
    else claimLabels.set(index, value);
    const item = document.querySelector(`#claims li[data-index="${index}"]`);
    if (!item) return;
    item.classList.toggle("labelled-yes", claimLabels.get(index) === 1);
    item.classList.toggle("labelled-no", claimLabels.get(index) === 0);
  }

  function submit(label) {
    if (!state || !state.row || busy) return;
    const claims = [...claimLabels].sort((a, b) => a[0] - b[0]).map(([claim, value]) => ({
      claim, label: value, claim_text: state.row.claims[claim].claim,
    }));
    call("api/label", {id: state.row.id, label, note: $("note").value, claims});
  }

  function undo() {
    if (!state || !state.can_undo || busy) return;
    call("api/undo", {});
  }

  function focusClaim(index) {
    const items = document.querySelectorAll("#claims li.claim");
    if (index < items.length) items[index].focus();
    else document.activeElement.blur();
  }

  const YES = new Set(["s", "1"]);
  const NO = new Set(["n", "0"]);

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLTextAreaElement || target instanceof HTMLInputElement) {
      if (event.key === "Escape") target.blur();
      return; // typing a note never labels
    }
    const key = event.key;
    const claim = target instanceof Element ? target.closest("li.claim") : null;
    if (claim && (YES.has(key) || NO.has(key))) {
      const index = Number(claim.dataset.index);
      setClaim(index, YES.has(key) ? 1 : 0);
      focusClaim(index + 1);
    } else if (YES.has(key)) submit(1);
    else if (NO.has(key)) submit(0);
    else if (key === "k") submit(null);
    else if (key === "u") undo();
    else if (key === "c") focusClaim(0);
    else if (key === "t") $("note").focus();
    else if (key === "Escape" && document.activeElement) document.activeElement.blur();
    else return;
    event.preventDefault();
  });

  $("supported").addEventListener("click", () => submit(1));
  $("unsupported").addEventListener("click", () => submit(0));
  $("skip").addEventListener("click", () => submit(null));
  $("undo").addEventListener("click", undo);
  call("api/state");
})();
