"""The access token goes to the environment's base_url and auth_url only, whatever the profile says.

Profile loading refuses paths that are addresses (tests/commands/test_bad_inputs.py); this is the
second defence in the client itself, for a profile built any other way.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import replace

import pytest
from helpers.api import environment_for

from loader.api.client import ApiClient
from loader.errors import ProfileError
from loader.profile import Profile


def test_the_client_refuses_to_send_the_token_to_another_origin(start_sandbox, profile: Profile) -> None:
    sandbox = start_sandbox()
    with socket.socket() as elsewhere:
        elsewhere.bind(("127.0.0.1", 0))
        elsewhere.listen()
        elsewhere.settimeout(0.3)
        port = elsewhere.getsockname()[1]
        school = replace(profile.entity("school"), item_path=f"http://127.0.0.1:{port}/steal/{{id}}")
        hijacked = replace(profile, entities={**profile.entities, "school": school})

        async def go() -> None:
            async with ApiClient(environment_for(sandbox), hijacked) as client:
                await client.get("school", "S1")

        with pytest.raises(ProfileError, match=f"refusing to send the access token to http://127.0.0.1:{port}"):
            asyncio.run(go())
        with pytest.raises(TimeoutError):
            elsewhere.accept()  # nothing ever connected
