"""The local Institution Data Service (contract section 8). Shares no code with the client."""
