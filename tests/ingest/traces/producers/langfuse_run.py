"""Run inside a langfuse venv: the Langfuse SDK (OpenTelemetry based) records an agent's observations (an agent, two
generations, a tool that answers and one that fails) and exports them as OTLP/HTTP protobuf to a stand-in of
Langfuse's OTLP endpoint on loopback, which writes each request it gets as OTLP/JSON, one per line, to OUT.
Prints what it recorded (the oracle) as JSON. Usage: langfuse_run.py OUT"""

import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from langfuse import Langfuse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                       ExportTraceServiceResponse)

OUT = sys.argv[1]
TASK = "Read notes.txt and stat missing.txt, then say what the notes say."


class Endpoint(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path.endswith("/api/public/otel/v1/traces"):
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            with open(OUT, "a") as f:
                f.write(json.dumps(MessageToDict(request)) + "\n")
            payload, kind = ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf"
        else:
            payload, kind = b"{}", "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST

    def log_message(self, *args):
        pass


def call(call_id, name, args):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def record(lf: Langfuse) -> dict:
    messages = [{"role": "system", "content": "You are a file assistant."}, {"role": "user", "content": TASK}]
    calls = [call("call_1", "read_file", {"path": "notes.txt"}), call("call_2", "stat", {"path": "missing.txt"})]
    answer = "The notes say: buy milk."
    with lf.start_as_current_observation(as_type="agent", name="file-agent", input={"task": TASK}) as agent:
        gen = agent.start_observation(as_type="generation", name="chat", model="gpt-4o-mini", input=messages)
        gen.update(output={"role": "assistant", "content": None, "tool_calls": calls},
                   usage_details={"input": 31, "output": 12})
        gen.end()
        tool = agent.start_observation(as_type="tool", name="read_file", input={"path": "notes.txt"})
        tool.update(output="buy milk")
        tool.end()
        failed = agent.start_observation(as_type="tool", name="stat", input={"path": "missing.txt"})
        failed.update(output="FileNotFoundError: missing.txt", level="ERROR", status_message="no such file")
        failed.end()
        history = messages + [{"role": "assistant", "content": None, "tool_calls": calls},
                              {"role": "tool", "tool_call_id": "call_1", "content": "buy milk"},
                              {"role": "tool", "tool_call_id": "call_2", "content": "FileNotFoundError: missing.txt"}]
        gen2 = agent.start_observation(as_type="generation", name="chat", model="gpt-4o-mini", input=history)
        gen2.update(output={"role": "assistant", "content": answer})
        gen2.end()
        agent.update(output=answer)
    return {"task": TASK, "model": "gpt-4o-mini", "answer": answer,
            "calls": [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                      for c in calls],
            "results": [("buy milk", False), ("FileNotFoundError: missing.txt", True)]}


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    lf = Langfuse(public_key="pk-lf-test", secret_key="sk-lf-test",
                  base_url=f"http://127.0.0.1:{server.server_address[1]}")
    oracle = record(lf)
    lf.flush()
    lf.shutdown()
    server.shutdown()
    print(json.dumps(oracle))


main()
