"""Merge-request notes for examples/gitlab-ci.yml (standard library only; runs in python:3.11-slim).

    python examples/gitlab_notes.py post plan.md   # post or update one note per report part
    python examples/gitlab_notes.py digest         # print the digest of the reviewed report

Reads CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID / CI_COMMIT_SHA and LOADER_GITLAB_TOKEN
(a project access token with the `api` scope) from GitLab CI's environment; never prints the token.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- loader-plan-report part {n} -->"
DIGEST = re.compile(r"Plan digest: `(sha256:[0-9a-f]{64})`")


def _api(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    url = f"{os.environ['CI_API_V4_URL']}/projects/{os.environ['CI_PROJECT_ID']}{path}"
    data = urllib.parse.urlencode(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"PRIVATE-TOKEN": os.environ["LOADER_GITLAB_TOKEN"]})
    with urllib.request.urlopen(request, timeout=30) as answer:
        text = answer.read().decode()
    return json.loads(text) if text else None


def _notes(iid: str) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = []
    page = 1
    while True:
        batch = _api("GET", f"/merge_requests/{iid}/notes?per_page=100&page={page}&sort=asc")
        notes += batch
        if len(batch) < 100:
            return notes
        page += 1


def _parts(first: Path) -> list[Path]:
    numbered = sorted(first.parent.glob(f"{first.stem}.part*{first.suffix}"),
                      key=lambda p: int(p.name[len(first.stem) + 5:-len(first.suffix)]))
    return [first, *numbered]


def post(report: str) -> None:
    iid = os.environ["CI_MERGE_REQUEST_IID"]
    mine = [n for n in _notes(iid) if n["body"].startswith("<!-- loader-plan-report part ")]
    parts = _parts(Path(report))
    for number, path in enumerate(parts, start=1):
        body = MARKER.format(n=number) + "\n" + path.read_text(encoding="utf-8")
        old = next((n for n in mine if n["body"].startswith(MARKER.format(n=number))), None)
        if old:
            _api("PUT", f"/merge_requests/{iid}/notes/{old['id']}", {"body": body})
        else:
            _api("POST", f"/merge_requests/{iid}/notes", {"body": body})
    for note in mine:  # a shorter report than last time: drop the parts it no longer has
        found = re.match(r"<!-- loader-plan-report part (\d+) -->", note["body"])
        if found and int(found[1]) > len(parts):
            _api("DELETE", f"/merge_requests/{iid}/notes/{note['id']}")


def digest() -> None:
    merged = [m for m in _api("GET", f"/repository/commits/{os.environ['CI_COMMIT_SHA']}/merge_requests")
              if m["state"] == "merged"]
    if not merged:
        sys.exit("this commit comes from no merged merge request: nothing reviewed, nothing applied")
    for note in reversed(_notes(str(merged[0]["iid"]))):
        if note["body"].startswith(MARKER.format(n=1)):
            found = DIGEST.search(note["body"])
            if found:
                print(found[1])
                return
    sys.exit(f"merge request !{merged[0]['iid']} has no loader plan report with a digest")


if __name__ == "__main__":
    if sys.argv[1:2] == ["post"] and len(sys.argv) == 3:
        post(sys.argv[2])
    elif sys.argv[1:] == ["digest"]:
        digest()
    else:
        sys.exit(__doc__)
