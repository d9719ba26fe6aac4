"""Installations in a dict: tests and single-process experiments."""

from __future__ import annotations


class MemoryInstallations:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], str] = {}

    async def save(self, platform: str, key: str, blob: str) -> None:
        self.rows[(platform, key)] = blob

    async def find(self, platform: str, key: str) -> str | None:
        return self.rows.get((platform, key))

    async def delete(self, platform: str, key: str) -> None:
        self.rows.pop((platform, key), None)
