// Sortable tables, strip tabs, the sample viewer and the per-sample filters. No network, no library.
(function () {
  "use strict";
  function each(list, fn) { Array.prototype.forEach.call(list, fn); }

  // -- sortable tables: click a header to sort by it (numbers by value, empty cells last)
  function key(cell) {
    if (!cell) return "";
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  }
  function sortBy(table, index, numeric, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[index]), y = key(b.cells[index]);
      if (x === "" && y === "") return 0;
      if (x === "") return 1;
      if (y === "") return -1;
      var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return descending ? -c : c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  each(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    each(heads, function (th, index) {
      th.addEventListener("click", function () {
        var descending = th.getAttribute("aria-sort") === "ascending";
        each(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        sortBy(table, index, th.getAttribute("data-type") === "num", descending);
      });
    });
  });

  // -- tabs: one metric's strips at a time
  each(document.querySelectorAll(".tabs"), function (tabs) {
    var buttons = tabs.querySelectorAll(".tab");
    each(buttons, function (button) {
      button.addEventListener("click", function () {
        each(buttons, function (b) {
          b.classList.toggle("active", b === button);
          var target = document.getElementById(b.getAttribute("data-target"));
          if (target) target.classList.toggle("active", b === button);
        });
      });
    });
  });

  // -- the sample viewer: every model's frames of one sample, stepped together
  var viewers = [];
  each(document.querySelectorAll(".viewer"), function (viewer) {
    var select = viewer.querySelector(".v-sample"), slider = viewer.querySelector(".v-frame");
    var label = viewer.querySelector(".v-label"), play = viewer.querySelector(".v-play");
    var samples = viewer.querySelectorAll(".v-sample-panels");
    var state = { sample: 0, frame: 0, timer: null };
    function frames() { return parseInt(samples[state.sample].getAttribute("data-frames"), 10) || 1; }
    function draw() {
      each(samples, function (panels, i) { panels.hidden = i !== state.sample; });
      var n = frames();
      state.frame = Math.max(0, Math.min(state.frame, n - 1));
      each(samples[state.sample].querySelectorAll("img.sprite"), function (img) {
        var own = parseInt(img.getAttribute("data-frames"), 10) || 1;
        var t = Math.min(state.frame, own - 1);
        img.style.transform = "translateX(" + (-100 * t / own) + "%)";
        img.style.opacity = state.frame < own ? "1" : "0.35";
      });
      slider.max = String(n - 1);
      slider.value = String(state.frame);
      select.value = String(state.sample);
      label.textContent = "frame " + (state.frame + 1) + " / " + n;
    }
    function stop() { if (state.timer) { clearInterval(state.timer); state.timer = null; play.textContent = "▶ play"; } }
    function go(sample, frame) { state.sample = (sample + samples.length) % samples.length; state.frame = frame; draw(); }
    select.addEventListener("change", function () { stop(); go(parseInt(select.value, 10), 0); });
    viewer.querySelector(".v-prev-sample").addEventListener("click", function () { stop(); go(state.sample - 1, 0); });
    viewer.querySelector(".v-next-sample").addEventListener("click", function () { stop(); go(state.sample + 1, 0); });
    viewer.querySelector(".v-prev").addEventListener("click", function () { stop(); go(state.sample, state.frame - 1); });
    viewer.querySelector(".v-next").addEventListener("click", function () { stop(); go(state.sample, state.frame + 1); });
    slider.addEventListener("input", function () { stop(); go(state.sample, parseInt(slider.value, 10)); });
    play.addEventListener("click", function () {
      if (state.timer) { stop(); return; }
      play.textContent = "❚❚ pause";
      state.timer = setInterval(function () { go(state.sample, (state.frame + 1) % frames()); }, 180);
    });
    viewer.setAttribute("tabindex", "0");
    viewer.addEventListener("keydown", function (e) {
      if (e.key === "ArrowRight") { stop(); go(state.sample, state.frame + 1); e.preventDefault(); }
      else if (e.key === "ArrowLeft") { stop(); go(state.sample, state.frame - 1); e.preventDefault(); }
      else if (e.key === " ") { play.click(); e.preventDefault(); }
    });
    var ids = Array.prototype.map.call(samples, function (s) { return s.getAttribute("data-sample"); });
    viewers.push({ element: viewer, show: function (id) { var i = ids.indexOf(id); if (i >= 0) { stop(); go(i, 0); } return i >= 0; } });
    draw();
  });

  // a sample id clicked anywhere opens it in its benchmark's viewer when the page carries its frames
  each(document.querySelectorAll("a.sample-link"), function (link) {
    var section = link.closest("section.bench");
    var target = null;
    viewers.forEach(function (v) { if (section && section.contains(v.element)) target = v; });
    link.addEventListener("click", function (e) {
      if (target && target.show(link.getAttribute("data-sample"))) return;  // follow the anchor to the viewer
      e.preventDefault();
      link.title = "this sample's frames are not in the page (the viewer carries a few samples)";
    });
  });

  // -- per-sample filters: by id, model and status
  each(document.querySelectorAll(".filters"), function (bar) {
    var table = document.getElementById(bar.getAttribute("data-table"));
    if (!table) return;
    var id = bar.querySelector(".f-id"), model = bar.querySelector(".f-model"), status = bar.querySelector(".f-status");
    var count = bar.querySelector(".f-count");
    function apply() {
      var text = id.value.trim().toLowerCase(), m = model.value, s = status.value, shown = 0;
      each(table.tBodies[0].rows, function (row) {
        var ok = (!text || row.getAttribute("data-id").toLowerCase().indexOf(text) >= 0)
          && (!m || row.getAttribute("data-model") === m) && (!s || row.getAttribute("data-state") === s);
        row.hidden = !ok;
        if (ok) shown += 1;
      });
      count.textContent = shown + " of " + table.tBodies[0].rows.length + " rows";
    }
    [id, model, status].forEach(function (el) { el.addEventListener("input", apply); el.addEventListener("change", apply); });
    apply();
  });
})();
