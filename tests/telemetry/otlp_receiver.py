"""A tiny OTLP/HTTP receiver: the collector the end-to-end telemetry tests send to.

``python -m tests.telemetry.otlp_receiver`` listens on a free port of
127.0.0.1, prints ``listening on <port>`` once it does, and takes
``POST /v1/traces`` and ``POST /v1/metrics`` protobuf bodies (gzip or not),
decoded with ``opentelemetry-proto``. ``GET /received`` answers with every
span and metric point received so far, flattened, as JSON lines:

* ``{"signal": "span", "name", "kind", "trace_id", "span_id", "parent_span_id",
  "attributes", "resource", "status"}`` (ids in hex, ``parent_span_id`` ``""``
  for a root);
* ``{"signal": "metric", "name", "unit", "attributes", "count", "resource"}``,
  one a histogram data point.

It stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import gzip
import json
import signal
import sys
import threading
import typing as t
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

#: What was received, in order, each a JSON-ready dict; appended under the lock.
RECEIVED: list[dict[str, t.Any]] = []
LOCK = threading.Lock()


def value_of(value: AnyValue) -> t.Any:
    """The Python value of an OTLP ``AnyValue``."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def attributes_of(pairs: t.Iterable[KeyValue]) -> dict[str, t.Any]:
    return {pair.key: value_of(pair.value) for pair in pairs}


def spans_of(request: ExportTraceServiceRequest) -> list[dict[str, t.Any]]:
    found = []
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                found.append(
                    {
                        "signal": "span",
                        "name": span.name,
                        "kind": Span.SpanKind.Name(span.kind),
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "attributes": attributes_of(span.attributes),
                        "status": MessageToDict(span.status),
                        "resource": resource,
                    }
                )
    return found


def metric_points_of(request: ExportMetricsServiceRequest) -> list[dict[str, t.Any]]:
    found = []
    for resource_metrics in request.resource_metrics:
        resource = attributes_of(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = getattr(metric, metric.WhichOneof("data") or "histogram")
                for point in data.data_points:
                    found.append(
                        {
                            "signal": "metric",
                            "name": metric.name,
                            "unit": metric.unit,
                            "attributes": attributes_of(point.attributes),
                            "count": getattr(point, "count", None),
                            "resource": resource,
                        }
                    )
    return found


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        try:
            if self.path == "/v1/traces":
                traces = ExportTraceServiceRequest.FromString(body)
                records, answer = spans_of(traces), ExportTraceServiceResponse().SerializeToString()
            elif self.path == "/v1/metrics":
                metrics = ExportMetricsServiceRequest.FromString(body)
                records, answer = metric_points_of(metrics), ExportMetricsServiceResponse().SerializeToString()
            else:
                self.send_error(404)
                return
        except Exception as error:  # told to the test, and a 400 the exporter does not retry
            with LOCK:
                RECEIVED.append({"signal": "error", "path": self.path, "error": repr(error)})
            self.send_error(400, repr(error))
            return
        with LOCK:
            RECEIVED.extend(records)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self) -> None:
        if self.path != "/received":
            self.send_error(404)
            return
        with LOCK:
            lines = "".join(json.dumps(record) + "\n" for record in RECEIVED).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/jsonl")
        self.send_header("Content-Length", str(len(lines)))
        self.end_headers()
        self.wfile.write(lines)

    def log_message(self, format: str, *args: t.Any) -> None:
        """Quiet: stdout carries only the ``listening on`` line."""


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True

    def stop(signum: int, frame: t.Any) -> None:
        # shutdown() waits for serve_forever(), which runs on this very thread: ask from another.
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
