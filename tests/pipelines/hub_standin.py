"""A loopback stand-in for the Hugging Face Hub's API, as much of it as `huggingface_hub`'s `create_repo` and
`upload_folder` use (repository creation, README metadata validation, preupload, NDJSON commits with files
inlined as base64): it keeps the committed files in memory so a test compares them with the folder uploaded.
Requests without the expected token are refused (401), as the Hub refuses them."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml


class HubStandIn:
    def __init__(self, token: str):
        self.token = token
        self.repos: dict[str, dict] = {}  # "datasets/<id>" -> {"private", "files": {path: bytes}}
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hub.requests.append(self.path)
                if self.headers.get("authorization") != f"Bearer {hub.token}":
                    return self._reply(401, {"error": "Invalid credentials in Authorization header"})
                return self._reply(*hub.answer(self.path.split("?")[0], body))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, path: str, body: bytes) -> tuple[int, dict]:
        parts = path.strip("/").split("/")
        if path == "/api/repos/create":
            req = json.loads(body)
            repo = f"{req['type']}s/{req['organization']}/{req['name']}"
            self.repos.setdefault(repo, {"private": bool(req.get("private")), "files": {}})
            return 200, {"url": f"{self.url}/{repo}", "name": repo}
        if path == "/api/validate-yaml":
            content = json.loads(body)["content"]
            meta = yaml.safe_load(content.split("---")[1]) if content.startswith("---") else None
            if not isinstance(meta, dict) or "configs" not in meta:
                return 400, {"errors": [{"message": "no YAML metadata with configs"}]}
            return 200, {"errors": [], "warnings": []}
        repo = "/".join(parts[1:4])  # api/<type>s/<org>/<name>/<action>/<revision>
        if repo not in self.repos:
            return 404, {"error": f"Repository not found: {repo}"}
        if parts[4] == "preupload":
            files = json.loads(body)["files"]
            return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                   for f in files]}
        if parts[4] == "commit":
            for line in body.splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    value = item["value"]
                    self.repos[repo]["files"][value["path"]] = base64.b64decode(value["content"])
            oid = f"{len(self.requests):040x}"
            return 200, {"commitUrl": f"{self.url}/{repo}/commit/{oid}", "commitOid": oid, "pullRequestUrl": None}
        return 404, {"error": f"not served here: {path}"}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
