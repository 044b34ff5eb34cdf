"""The mapping schema in an editor: a real YAML language server (the npm `yaml-language-server`, as
VS Code's YAML extension runs it) completes `entity:` and a block's `fields:` and flags a field the
entity does not have; and the schema's generated rules are what the entity profile makes."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from loader.profile import load_profile
from loader.source.mapping_schema_build import SCHEMA_FILE, rebuilt, writable_entities

SERVER = shutil.which("yaml-language-server")
MAPPING = """# yaml-language-server: $schema={schema}
version: 1
source: courses.csv
entities:
  courses:
    entity: course
    key: [code]
    fields:
      code: Code
      first_name: Name
      
"""


def test_the_committed_schema_holds_what_the_profile_makes() -> None:
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    assert rebuilt(text, load_profile()) == text, "run `python -m loader.source.mapping_schema_build`"


class LanguageServer:
    """A yaml-language-server over stdio, spoken to in LSP's framed JSON-RPC."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen([str(SERVER), "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {
            "textDocument": {"completion": {"completionItem": {"snippetSupport": False}},
                             "publishDiagnostics": {}}}})
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration",
                    {"settings": {"yaml": {"validate": True, "completion": True, "hover": True}}})

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while (line := self.process.stdout.readline().strip()):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(self.process.stdout.read(length))
        return message

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:  # a request of the server's (configuration): answer it
                self.send({"id": message["id"], "result": [{"validate": True, "completion": True}]})
            elif "method" in message:
                self.notifications.append(message)

    def diagnostics(self, uri: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """The diagnostics the server publishes for `uri` (waiting for the first non-empty set)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.notifications:
                if message["method"] == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri \
                        and message["params"]["diagnostics"]:
                    return list(message["params"]["diagnostics"])
            self.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
        return []

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


@pytest.mark.skipif(SERVER is None, reason="no yaml-language-server (npm install -g yaml-language-server)")
def test_an_editor_completes_entities_and_fields_and_flags_a_wrong_field(tmp_path: Path) -> None:
    mapping = tmp_path / "courses.yaml"
    text = MAPPING.format(schema=SCHEMA_FILE.as_uri())
    mapping.write_text(text, encoding="utf-8")
    uri = mapping.as_uri()
    server = LanguageServer(tmp_path)
    try:
        server.notify("textDocument/didOpen",
                      {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
        lines = text.splitlines()
        entity_line = next(n for n, line in enumerate(lines) if line.strip() == "entity: course")
        entities = server.request("textDocument/completion", {
            "textDocument": {"uri": uri}, "position": {"line": entity_line, "character": len("    entity: ")}})
        offered = {item["label"] for item in (entities["items"] if isinstance(entities, dict) else entities)}
        assert set(writable_entities(load_profile())) <= offered

        blank = len(lines) - 1  # the indented empty line under fields:
        fields = server.request("textDocument/completion", {
            "textDocument": {"uri": uri}, "position": {"line": blank, "character": 6}})
        labels = {item["label"] for item in (fields["items"] if isinstance(fields, dict) else fields)}
        assert {"name", "parent", "custom_attributes"} <= labels  # a course's fields, not only custom_attributes

        wrong = next(n for n, line in enumerate(lines) if "first_name" in line)
        found = server.diagnostics(uri)
        assert any(d["range"]["start"]["line"] == wrong for d in found), found
    finally:
        server.close()
