"""Every format reader the ingest runner knows, by name. A format module has:

- `FORMAT` (its name here) and `VERSION` (bump it when its output changes: finished tasks are then redone),
- `units(files, head) -> list[str]`: which of the input's files (or their directories) it reads; `head(path)`
  returns a file's first 4 KiB for content sniffing,
- `read(source) -> Iterator[Episode | Rejected]`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

FORMATS: dict[str, str] = {
    "droidbot": "ingest.android.droidbot",
    "uiautomator": "ingest.android.uiautomator",
    "getevent": "ingest.android.getevent",
    "aitw": "ingest.android.aitw",
    "androidcontrol": "ingest.android.androidcontrol",
    "androidworld": "ingest.android.androidworld",
    "sweagent": "ingest.swe.sweagent",
    "openhands": "ingest.swe.openhands",
    "minisweagent": "ingest.swe.minisweagent",
    "openhands_v1": "ingest.swe.openhands_v1",
    "mcp_jsonrpc": "ingest.mcp.jsonrpc",
    "mcp_sdk": "ingest.mcp.sdk_calls",
    "mcp_proxy_log": "ingest.mcp.proxy_log",
    "mcp_audit_log": "ingest.mcp.audit_log",
    "agentworldbench": "ingest.agentworldbench",
    "atif": "ingest.atif",
    "inspect_log": "ingest.inspect_log",
    "claude_code": "ingest.swe.claude_code",
    "codex": "ingest.swe.codex",
    "playwright_trace": "ingest.browser.playwright_trace",
    "har": "ingest.browser.har",
    "cdp": "ingest.browser.cdp",
    "browsergym": "ingest.browser.browsergym",
    "browser_use": "ingest.browser.browser_use",
    "asciicast": "ingest.ubuntu.asciicast",
    "terminal_bench": "ingest.ubuntu.terminal_bench",
    "osworld": "ingest.ubuntu.osworld",
    "agentnet": "ingest.macos.agentnet",
    "agentnet_recording": "ingest.macos.agentnet_recording",
    "tau2": "ingest.chat.tau2",
    # last: it reads the chat-message lists no named reader claims
    "chat_shape": "ingest.chat.by_shape",
}


def load(name: str) -> ModuleType:
    try:
        return importlib.import_module(FORMATS[name])
    except KeyError:
        raise KeyError(f"unknown format {name!r}; known: {', '.join(sorted(FORMATS))}") from None
