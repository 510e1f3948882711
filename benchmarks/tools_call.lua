-- wrk script: POST tools/call add(a, b) with a unique JSON-RPC id per request.
-- Environment: MCP_SESSION (session id, empty for none), MCP_PATH (default /mcp).
-- Prints one JSON line with the summary when done.

local session = os.getenv("MCP_SESSION") or ""
local counter = 0
local thread_id = 0
local threads = {}

function setup(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.path = os.getenv("MCP_PATH") or "/mcp"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
  if session ~= "" then
    wrk.headers["Mcp-Session-Id"] = session
  end
end

function request()
  counter = counter + 1
  -- ids are unique across threads: thread number in the high digits.
  local id = thread_id * 1000000000 + counter
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":2}}}',
    id, counter % 1000)
  return wrk.format(nil, nil, nil, body)
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.connect + errors.read + errors.write + errors.status + errors.timeout))
end
