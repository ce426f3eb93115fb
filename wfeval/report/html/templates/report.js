// Sortable tables: click a header to sort by it (numbers by value, empty cells last).
(function () {
  "use strict";
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
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, index) {
      th.addEventListener("click", function () {
        var descending = th.getAttribute("aria-sort") === "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        sortBy(table, index, th.getAttribute("data-type") === "num", descending);
      });
    });
  });
})();
