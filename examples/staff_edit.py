"""Rehearse a platform edit on your own project: change a record as a person in the platform's
interface would, through the sandbox's `staff-client`, so the next `loader plan` shows it as an
edit made in the platform (see docs/sandbox.md, "Rehearsing platform edits").

    loader sandbox serve --data .loader/sandbox.sqlite3 --port 0     # prints its address
    python examples/staff_edit.py http://127.0.0.1:PORT schools SCI name "School of Sciences"

Arguments: the sandbox's address, the collection (`schools`, `courses`, `programs`, `subjects`
under /institution/catalogue), the record's code, the field and its new value.
"""

from __future__ import annotations

import sys

import httpx

TOKEN_PATH = "/realms/sandbox/protocol/openid-connect/token"
STAFF = {"grant_type": "client_credentials", "client_id": "staff-client", "client_secret": "staff-secret"}


def main(base_url: str, collection: str, code: str, field: str, value: str) -> int:
    with httpx.Client(base_url=base_url, timeout=30) as http:
        token = http.post(TOKEN_PATH, data=STAFF).raise_for_status().json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        path = f"/institution/catalogue/{collection}"
        found = http.get(path, params={"code": code}, headers=headers).raise_for_status().json()["data"]
        if not found:
            print(f"no {collection} record with code {code!r}", file=sys.stderr)
            return 1
        http.patch(f"{path}/{found[0]['id']}", json={field: value}, headers=headers).raise_for_status()
    print(f"{collection} {code}: {field} set to {value!r} by staff-client")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    sys.exit(main(*sys.argv[1:]))
