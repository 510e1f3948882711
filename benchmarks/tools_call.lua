-- wrk script: POST tools/call add(a, b) with a unique JSON-RPC id per request.
-- Environment: MCP_SESSION (session id, empty for none), MCP_PATH (default /mcp),
-- MCP_ERA ("handshake", the default, or "modern": no session, the envelope in
-- params._meta and the Mcp-Method / Mcp-Name routing headers) and
-- MCP_PROTOCOL_VERSION (default 2025-11-25, or 2026-07-28 when modern),
-- MCP_AUTHORIZATION (an Authorization header, empty for none) and MCP_VARIANT
-- ("progress" calls the progress tool with a progress token: an event stream).
-- Prints one JSON line with the summary when done.

local session = os.getenv("MCP_SESSION") or ""
local modern = os.getenv("MCP_ERA") == "modern"
local version = os.getenv("MCP_PROTOCOL_VERSION") or (modern and "2026-07-28" or "2025-11-25")
local authorization = os.getenv("MCP_AUTHORIZATION") or ""
local progress = os.getenv("MCP_VARIANT") == "progress"
local tool = progress and "progress" or "add"
local counter = 0
-- A global, not a local: setup() sets it in each thread's state (a local would shadow it,
-- and every thread would send the same ids, which a session refuses while one is in flight).
thread_id = 0
local threads = {}
-- What follows "arguments":{...} in params: the envelope when modern, and the progress token.
local meta = {}
if modern then
  table.insert(meta, string.format(
    '"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":{}', version))
end
if progress then
  table.insert(meta, '"progressToken":"p"')
end
local envelope = ""
if #meta > 0 then
  envelope = ',"_meta":{' .. table.concat(meta, ",") .. "}"
end

function setup(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.path = os.getenv("MCP_PATH") or "/mcp"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = version
  if modern then
    wrk.headers["Mcp-Method"] = "tools/call"
    wrk.headers["Mcp-Name"] = tool
  elseif session ~= "" then
    wrk.headers["Mcp-Session-Id"] = session
  end
  if authorization ~= "" then
    wrk.headers["Authorization"] = authorization
  end
end

function request()
  counter = counter + 1
  -- ids are unique across threads: thread number in the high digits.
  local id = thread_id * 1000000000 + counter
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{"a":%d,"b":2}%s}}',
    id, tool, counter % 1000, envelope)
  return wrk.format(nil, nil, nil, body)
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.connect + errors.read + errors.write + errors.status + errors.timeout))
end
