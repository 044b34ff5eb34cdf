"""The client: the loader's only door to the service (the only package importing httpx)."""
