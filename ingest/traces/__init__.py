"""Observability traces: OpenTelemetry spans (OTLP/JSON, the Python SDK's JSON) with the GenAI semantic
conventions or OpenInference attributes, and the OpenAI Agents SDK's trace exports. A trace is an episode; the
span tree is turned into a transcript (`ingest.traces.spans`) and read by `ingest.transcript`."""
