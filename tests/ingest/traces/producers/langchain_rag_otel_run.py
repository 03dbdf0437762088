"""Runs the retrieval agent of `langchain_rag_run.py` traced through LangSmith's OpenTelemetry exporter
(`LANGSMITH_OTEL_ENABLED`, `LANGSMITH_OTEL_ONLY`: the runs become spans, none is posted to LangSmith), the spans
written as OTLP/JSON lines by the global tracer provider (`otlp_json_file.py`). Prints the same oracle as JSON.

Run with the langchain-core-otel venv's Python: `langchain_rag_otel_run.py OUT_FILE`.
"""

import os
import sys
from pathlib import Path


def main(out: Path) -> None:
    os.environ.update({"LANGSMITH_OTEL_ENABLED": "true", "LANGSMITH_OTEL_ONLY": "true"})
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    sys.path.insert(0, str(Path(__file__).parent))
    import langchain_rag_run
    from otlp_json_file import OtlpJsonFile

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(out)))
    trace.set_tracer_provider(provider)
    langchain_rag_run.main("http://127.0.0.1:9")  # no run is posted: OTEL_ONLY
    provider.force_flush()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
