"""/q/openapi.json and the offline Swagger UI at /q/swagger-ui/ (assets vendored in static/)."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from loader.sandbox.http import json_response
from loader.sandbox.openapi import build_openapi

STATIC = Path(__file__).parent / "static"
_ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "swagger-ui-bundle.js": "application/javascript",
    "swagger-initializer.js": "application/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}


def routes() -> list[BaseRoute]:
    description = build_openapi()

    async def openapi(request: Request) -> Response:
        return json_response(description)

    async def ui_root(request: Request) -> Response:
        return RedirectResponse("/q/swagger-ui/", status_code=307)

    async def asset(request: Request) -> Response:
        name = request.path_params.get("name") or "index.html"
        media_type = _ASSETS.get(name)
        if media_type is None:
            return json_response({"message": f"no such asset '{name}'"}, 404)
        return FileResponse(STATIC / name, media_type=media_type)

    return [
        Route("/q/openapi.json", openapi, methods=["GET"]),
        Route("/q/swagger-ui", ui_root, methods=["GET"]),
        Route("/q/swagger-ui/", asset, methods=["GET"]),
        Route("/q/swagger-ui/{name}", asset, methods=["GET"]),
    ]
