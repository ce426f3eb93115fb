"""The arena's two pages (Jinja2, autoescaped): the voting page and the ratings page. The voting
page's script puts every text it receives with ``textContent`` (never as HTML)."""

from __future__ import annotations

STYLE = """body{font:15px system-ui,sans-serif;margin:1.2em auto;max-width:70em;color:#222}
.pair{display:flex;gap:1.5em;justify-content:center;margin:1em 0}.side{text-align:center}
canvas{image-rendering:pixelated;border:1px solid #999;width:320px;height:320px;background:#777}
button{font-size:15px;margin:.2em}kbd{border:1px solid #aaa;border-radius:3px;padding:0 .3em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
.note{color:#555}#status{min-height:1.4em}"""

VOTE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>wfeval arena</title>
<meta name="arena-token" content="{{ token }}"><style>{{ style }}</style></head>
<body>
<h1>Which video is better?</h1>
<p class="note">The same first frame and actions, two models, sides at random, names hidden. {{ pool }}.
<a href="ratings">Ratings</a></p>
<p><label>Your name: <input id="rater" maxlength="64" autocomplete="off"></label>
<button id="start">Start</button> <span id="status"></span> <span class="note" id="progress"></span>
<button id="undo" hidden>undo my last vote <kbd>u</kbd></button></p>
<div id="arena" hidden>
<p class="note" id="sample"></p>
<div class="pair">
 <div class="side" id="ref-side" hidden><canvas id="reference"></canvas><div>reference</div></div>
 <div class="side"><canvas id="left"></canvas><div>A (left)</div></div>
 <div class="side"><canvas id="right"></canvas><div>B (right)</div></div>
</div>
<p>frame <span id="frame">1</span>/<span id="frames">1</span>
<button id="play">play/pause <kbd>space</kbd></button><button id="back">&larr; <kbd>,</kbd></button>
<button id="fwd">&rarr; <kbd>.</kbd></button><button id="ref">reference <kbd>r</kbd></button></p>
<p><button data-choice="a">A is better <kbd>a</kbd></button><button data-choice="b">B is better <kbd>b</kbd></button>
<button data-choice="tie">tie <kbd>t</kbd></button><button data-choice="both_bad">both bad <kbd>x</kbd></button></p>
</div>
<script>
(function () {
  var token = document.querySelector('meta[name="arena-token"]').content;
  var pair = null, frame = 0, timer = null, images = {}, busy = false;
  var $ = function (id) { return document.getElementById(id); };
  var ASK = "enter your name first";
  function status(text) { $("status").textContent = text; }
  function answer(r) { return r.json().then(function (j) { return [r.status, j]; }); }
  function progress(p) {
    if (!p) return;
    $("progress").textContent = "you: " + p.judged + " of " + p.total + " pairs judged";
    document.body.setAttribute("data-judged", p.judged);
  }
  function draw() {
    if (!pair) return;
    ["left", "right", "reference"].forEach(function (side) {
      var img = images[side], c = $(side), v = pair[side];
      if (!img || !v || !img.complete) return;
      c.width = v.width; c.height = v.height;
      var ctx = c.getContext("2d"); ctx.imageSmoothingEnabled = false;
      var f = Math.min(frame, v.frames - 1);
      ctx.drawImage(img, f * v.width, 0, v.width, v.height, 0, 0, v.width, v.height);
    });
    $("frame").textContent = frame + 1; $("frames").textContent = pair.frames;
  }
  function step(d) { if (pair) { frame = (frame + d + pair.frames) % pair.frames; draw(); } }
  function play() {
    if (timer) { clearInterval(timer); timer = null; return; }
    timer = setInterval(function () { step(1); }, 1000 / (pair ? pair.fps : 8));
  }
  function load() {
    var rater = $("rater").value.trim();
    if (!rater) { status(ASK); return; }
    fetch("api/next?session=" + encodeURIComponent(token) + "&rater=" + encodeURIComponent(rater))
      .then(answer)
      .then(function (res) {
        if (res[0] !== 200) { status(res[1].error || ("error " + res[0])); return; }
        if ($("status").textContent === ASK) status("");
        progress(res[1].progress);
        if (!res[1].pair) {
          pair = null; $("arena").hidden = true; status("you have judged every pair - thank you"); return;
        }
        pair = res[1].pair; frame = 0; images = {};
        $("sample").textContent = "sample " + pair.sample + " (" + pair.column + "), " + res[1].votes + " votes so far";
        ["left", "right", "reference"].forEach(function (side) {
          if (!pair[side]) return;
          var img = new Image(); img.onload = draw; img.src = pair[side].url; images[side] = img;
        });
        $("arena").hidden = false; document.body.setAttribute("data-pair", pair.id);
        if (!timer) play();
      });
  }
  function vote(choice) {
    if (!pair || busy) return;
    busy = true;
    fetch("api/vote", {method: "POST", headers: {"Content-Type": "application/json"},
                       body: JSON.stringify({session: token, pair_id: pair.id, choice: choice})})
      .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (res) {
        busy = false;
        if (res[0] !== 200) { status(res[1].error || ("error " + res[0])); return; }
        status("saved (" + res[1].votes + " votes)"); document.body.setAttribute("data-votes", res[1].votes);
        $("undo").hidden = false;
        load();
      }, function () { busy = false; status("not saved: the arena did not answer"); });
  }
  function undo() {
    if (busy) return;
    busy = true;
    fetch("api/undo", {method: "POST", headers: {"Content-Type": "application/json"},
                       body: JSON.stringify({session: token})})
      .then(answer)
      .then(function (res) {
        busy = false;
        if (res[0] !== 200) { status(res[1].error || ("error " + res[0])); $("undo").hidden = true; return; }
        status("vote taken back (" + res[1].votes + " votes): judge this pair again");
        document.body.setAttribute("data-votes", res[1].votes);
        load();
      }, function () { busy = false; status("not taken back: the arena did not answer"); });
  }
  $("start").onclick = load;
  $("undo").onclick = undo;
  $("rater").addEventListener("keydown", function (e) {
    if (e.key === "Enter") { e.preventDefault(); load(); $("rater").blur(); }
  });
  $("play").onclick = play; $("back").onclick = function () { step(-1); }; $("fwd").onclick = function () { step(1); };
  $("ref").onclick = function () { $("ref-side").hidden = !$("ref-side").hidden; };
  document.querySelectorAll("button[data-choice]").forEach(function (b) {
    b.onclick = function () { vote(b.getAttribute("data-choice")); };
  });
  var keys = {a: "a", b: "b", t: "tie", x: "both_bad"};
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "INPUT") return;
    if (keys[e.key]) { e.preventDefault(); vote(keys[e.key]); }
    else if (e.key === "u") { e.preventDefault(); undo(); }
    else if (e.key === " ") { e.preventDefault(); play(); }
    else if (e.key === ",") step(-1); else if (e.key === ".") step(1);
    else if (e.key === "r") $("ref-side").hidden = !$("ref-side").hidden;
  });
})();
</script>
</body></html>"""

RATINGS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>wfeval arena: ratings</title>
<style>{{ style }}</style></head>
<body>
<h1>Ratings from people's votes</h1>
<p class="note"><a href="./">Vote</a> - {{ pool }}.</p>
{% if not section %}<p id="no-votes">No votes yet.</p>{% else %}
<p class="note">Bradley-Terry (ties and "both bad" as half a win each), Elo scale around 1200, bootstrap over votes.</p>
<table id="ratings"><thead><tr>{% for h in section.header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for r in section.rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody></table>
{% for n in section.notes %}<p class="note">{{ n }}</p>{% endfor %}
<h2>Which measure agrees with people</h2>
<p class="note">Share of decided votes (A or B) where the measure prefers the same video; Kendall's tau of its
ranking of the models with the ratings.</p>
<table id="agreement"><thead><tr>{% for h in section.agreement_header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for r in section.agreement_rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody>
</table>
{% endif %}
</body></html>"""
