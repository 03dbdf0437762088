"""Observability traces: OpenTelemetry spans (OTLP/JSON, the Python SDK's JSON) with the GenAI semantic conventions,
OpenInference or OpenLLMetry attributes, the OpenAI Agents SDK's trace exports and LangSmith runs. A trace is an
episode; its spans are turned into a transcript (`ingest.traces.spans`) and read by `ingest.transcript`."""
