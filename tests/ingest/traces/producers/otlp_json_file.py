"""An OpenTelemetry span exporter that writes each batch of finished spans as one OTLP/JSON line, through the
SDK's own protobuf encoder (what an OTLP file exporter writes).

The producer scripts import it from this folder in their own venvs (the folder is the script's own for the trace
producers; the framework producers under tests/ingest/chat/producers put it on `sys.path`); it needs only
`opentelemetry-sdk`, `opentelemetry-exporter-otlp-proto-common` and `protobuf`, which every traced venv has.
"""

from pathlib import Path

from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class OtlpJsonFile(SpanExporter):
    """Each batch of finished spans as one OTLP/JSON line of `path`."""

    def __init__(self, path: Path):
        self.out = path.open("w")

    def export(self, spans):
        self.out.write(MessageToJson(encode_spans(spans), indent=None) + "\n")
        self.out.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self):
        self.out.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
