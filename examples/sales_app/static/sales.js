// The view's side of MCP Apps (SEP-1865): JSON-RPC over postMessage with the host.
(function () {
  let next = 0;
  const pending = {};
  const post = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending[id] = { resolve, reject };
      post({ id, method, params });
    });

  function show(result) {
    const data = result.structuredContent || {};
    document.getElementById("title").textContent = "Sales " + data.year;
    const body = document.querySelector("#sales tbody");
    body.replaceChildren();
    for (const row of data.rows || []) {
      const line = document.createElement("tr");
      for (const value of [row.month, row.amount]) {
        const cell = document.createElement("td");
        cell.textContent = String(value);
        line.appendChild(cell);
      }
      body.appendChild(line);
    }
    document.getElementById("total").textContent = "Total: " + data.total;
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return; // only the host speaks to the view
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && pending[message.id] && !message.method) {
      const waiting = pending[message.id];
      delete pending[message.id];
      return message.error ? waiting.reject(message.error) : waiting.resolve(message.result);
    }
    if (message.method === "ui/notifications/tool-result") show(message.params);
    else if (message.method === "ui/resource-teardown" || message.method === "ping") post({ id: message.id, result: {} });
  });

  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "sales-view", version: "1.0.0" },
    appCapabilities: {},
  }).then(() => post({ method: "ui/notifications/initialized", params: {} }));
})();
